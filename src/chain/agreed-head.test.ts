import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agreedHead, believableUpTo, HEAD_BOUND, quorumHead, quorumOf, type ChainClaim } from './agreed-head.ts';

const LIE = 1_000_000_000_000;
const T = 1_000_000;
const at100 = { head: 100, at: T };

test('a node claiming block 10^12 among nodes at 100 is held back, as primary or anywhere in the list', () => {
  for (const claims of [[{ head: LIE }, { head: 100 }, { head: 101 }], [{ head: 100 }, { head: 101 }, { head: LIE }]]) {
    const a = agreedHead(claims, at100, T + 1000, HEAD_BOUND);
    assert.equal(a.head, 101);
    assert.deepEqual(a.believed, claims.map((c) => c.head !== LIE));
  }
});

test('also at start, before any head is known, when other nodes disagree', () => {
  const a = agreedHead([{ head: LIE }, { head: 7 }], { head: undefined, at: 0 }, T, HEAD_BOUND);
  assert.equal(a.head, 7);
  assert.deepEqual(a.believed, [false, true]);
});

test('two nodes that agree confirm each other; a node a few blocks ahead is believed', () => {
  assert.equal(agreedHead([{ head: 5000 }, { head: 5001 }, { head: 100 }], at100, T, HEAD_BOUND).head, 5001);
  assert.equal(agreedHead([{ head: 103 }, { head: 100 }], at100, T, HEAD_BOUND).head, 103);
});

test('a single node: a jump beyond what time allows is held until it served the block', () => {
  const limit = believableUpTo(at100, T + 10_000, HEAD_BOUND);
  assert.equal(limit, 100 + HEAD_BOUND.slackBlocks + 10 * HEAD_BOUND.blocksPerSecond);
  assert.equal(agreedHead([{ head: limit }], at100, T + 10_000, HEAD_BOUND).head, limit, 'within what time allows');
  assert.deepEqual(agreedHead([{ head: LIE }], at100, T + 10_000, HEAD_BOUND), { head: 100, believed: [false] });
  assert.deepEqual(agreedHead([{ head: LIE, served: LIE }], at100, T + 10_000, HEAD_BOUND), { head: LIE, believed: [true] });
  // Serving it counts only when no other healthy node disagrees.
  assert.equal(agreedHead([{ head: LIE, served: LIE }, { head: 100 }], at100, T + 10_000, HEAD_BOUND).head, 100);
});

test('a steadily advancing node is believed even when the other node is stalled', () => {
  // One node stalled at 100, the other a block a second ahead for 60 s: the agreed head follows it.
  let last = at100;
  for (let s = 1; s <= 60; s++) {
    const a = agreedHead([{ head: 100 }, { head: 100 + s }], last, T + s * 1000, HEAD_BOUND);
    assert.equal(a.head, 100 + s, `second ${s}`);
    last = { head: a.head!, at: T + s * 1000 };
  }
});

test('no claim: the last head holds; no bound (embedded chain): every claim believed', () => {
  assert.equal(agreedHead([undefined, undefined], at100, T, HEAD_BOUND).head, 100);
  assert.equal(agreedHead([{ head: LIE }, { head: 100 }], at100, T, undefined).head, LIE);
});

describe('a quorum of nodes with the same hash', () => {
  /** A node's latest block `n` on branch `b` (hash `b<n>`), and the hashes it was asked for. */
  const on = (b: string, n: number, asked: number[] = []): ChainClaim => ({ block: { number: n, hash: `${b}${n}` }, hashes: new Map(asked.map((k) => [k, `${b}${k}`])) });
  const rule = { size: 2, maxLag: 5 };
  const all = (k: number) => Array<boolean>(k).fill(true);

  test('three nodes at the same block: that block', () => {
    assert.deepEqual(quorumHead([on('a', 10), on('a', 10), on('a', 10)], all(3), rule), { head: 10, forked: [false, false, false], wanted: [] });
  });

  test('one node a block ahead: the block the other two have; the one ahead is asked its hash there, and is not forked', () => {
    const ahead = on('a', 11);
    const first = quorumHead([ahead, on('a', 10), on('a', 10)], all(3), rule);
    assert.equal(first.head, 10);
    assert.deepEqual(first.wanted, [{ index: 0, number: 10 }]);
    assert.deepEqual(quorumHead([on('a', 11, [10]), on('a', 10), on('a', 10)], all(3), rule), { head: 10, forked: [false, false, false], wanted: [] });
  });

  test('nodes at different heights agree at the lower one once the higher is asked its hash there', () => {
    assert.equal(quorumHead([on('a', 12), on('a', 9)], all(2), rule).head, undefined, 'no hash of the node ahead at 9 yet');
    assert.equal(quorumHead([on('a', 12, [9]), on('a', 9)], all(2), rule).head, 9);
  });

  test('one node on a branch of its own, far ahead: the other two set the head, it is forked, never the head', () => {
    // It mined block 11 and 20 more alone; the others' block 11 is another.
    const fork = on('c', 31, [11]);
    const q = quorumHead([on('a', 11), fork, on('a', 11)], all(3), rule);
    assert.deepEqual(q, { head: 11, forked: [false, true, false], wanted: [] });
    // Before it is asked its block 11: the head is still the others', and its hash there is wanted.
    const early = quorumHead([on('a', 11), on('c', 31), on('a', 11)], all(3), rule);
    assert.equal(early.head, 11);
    assert.deepEqual(early.wanted, [{ index: 1, number: 11 }]);
  });

  test('the quorum is capped at the healthy nodes: one of three answering is followed alone; none, no head', () => {
    assert.deepEqual(quorumHead([undefined, on('a', 40), undefined], all(3), rule), { head: 40, forked: [false, false, false], wanted: [] });
    assert.equal(quorumHead([on('a', 40), on('a', 41)], [true, false], rule).head, 40, 'a node not believed is not counted');
    assert.equal(quorumHead([undefined, undefined], all(2), rule).head, undefined);
  });

  test('one node: its block; a quorum of 1: the highest', () => {
    assert.equal(quorumHead([on('a', 7)], all(1), rule).head, 7);
    assert.equal(quorumHead([on('a', 7), on('a', 9)], all(2), { size: 1, maxLag: 5 }).head, 9);
  });

  test('a node stalled far behind does not stall the network; nodes that agree far behind a lone node hold it', () => {
    // Two nodes: one stopped at 40, the other at 100 on the same chain: the one that moves on is followed.
    assert.equal(quorumHead([on('a', 100), on('a', 40)], all(2), rule).head, 100);
    // Two nodes agreeing at 40 and one alone at 60 that has their block 40 (a branch not visible yet): the two are a
    // quorum, and the lone node's newer blocks are not the head.
    const alone: ChainClaim = { block: { number: 60, hash: 'c60' }, hashes: new Map([[40, 'a40']]) };
    assert.deepEqual(quorumHead([on('a', 40), on('a', 40), alone], all(3), rule), { head: 40, forked: [false, false, false], wanted: [] });
  });

  test('two nodes left, each on a branch of its own: no quorum can be had, the highest is followed, none forked', () => {
    const q = quorumHead([on('a', 12, [11]), on('c', 11)], all(2), rule);
    assert.deepEqual(q, { head: 12, forked: [false, false], wanted: [] });
    // Not known yet whether they are on one chain: the hash that says it is wanted, and the head waits for it.
    assert.deepEqual(quorumHead([on('a', 12), on('c', 11)], all(2), rule), { head: undefined, forked: [false, false], wanted: [{ index: 0, number: 11 }] });
  });

  test('the quorum lost: a node found forked does not count, the node left on the agreed chain is followed alone', () => {
    // One of the two that agreed is gone; the node left (at 20) and the forked one (at 22, its own 20) disagree.
    const left = [on('a', 20), undefined, on('c', 22, [20])];
    assert.deepEqual(quorumHead(left, all(3), rule, [false, false, true]), { head: 20, forked: [false, false, true], wanted: [] });
    // Not known to be forked (no round told it yet): two nodes on branches of their own, the highest followed.
    assert.equal(quorumHead(left, all(3), rule).head, 22);
  });

  test('a forked node is back once its block at the agreed height has the agreed hash', () => {
    assert.deepEqual(quorumHead([on('a', 20), on('a', 20), on('a', 21, [20])], all(3), rule, [false, false, true]), { head: 20, forked: [false, false, false], wanted: [] });
    // Below the agreed block: back when its latest block is the quorum's block at that height.
    assert.deepEqual(quorumHead([on('a', 20, [19]), on('a', 20), on('a', 19)], all(3), rule, [false, false, true]).forked, [false, false, false]);
  });

  test('a forked node whose hash at the agreed block is not known yet stays forked, and that hash is wanted', () => {
    const q = quorumHead([on('a', 20), on('a', 20), on('c', 22)], all(3), rule, [false, false, true]);
    assert.deepEqual(q, { head: 20, forked: [false, false, true], wanted: [{ index: 2, number: 20 }] });
    // Nor does it count: alone ahead of two that agree, its own blocks are never a candidate.
    assert.equal(quorumHead([on('a', 20), on('c', 22, [21]), on('c', 22, [21])], all(3), rule, [false, true, true]).head, 20);
  });

  test('only forked nodes left: no block is agreed (the head holds) and they stay forked', () => {
    assert.deepEqual(quorumHead([undefined, undefined, on('c', 22)], all(3), rule, [false, false, true]), { head: undefined, forked: [false, false, true], wanted: [] });
  });

  test('the default quorum (0) is a majority of the nodes counted: one of one, two of two or three, three of four or five', () => {
    assert.deepEqual([1, 2, 3, 4, 5].map((n) => quorumOf(0, n)), [1, 2, 2, 3, 3]);
    assert.deepEqual([1, 2, 3].map((n) => quorumOf(2, n)), [1, 2, 2], 'a number is capped at the nodes counted');
  });

  test('a majority of five: the three on one branch set the head and the two on another are forked; two of five cannot', () => {
    const split = [on('a', 10, [9]), on('a', 10, [9]), on('b', 10, [9]), on('b', 10, [9]), on('b', 10, [9])].map((c) => ({ ...c, hashes: new Map([[9, 'x9']]) }));
    assert.deepEqual(quorumHead(split, all(5), { size: 0, maxLag: 5 }), { head: 10, forked: [true, true, false, false, false], wanted: [] });
    // With a quorum of 2 both branches have one at 10: only the block they share is agreed, and none is told forked.
    assert.deepEqual(quorumHead(split, all(5), rule), { head: 9, forked: [false, false, false, false, false], wanted: [] });
  });

  test('two branches with a quorum each at one height: no block there is agreed; the block they share is', () => {
    const q = quorumHead([on('a', 10, [9]), on('a', 10, [9]), on('b', 10, [9]), on('b', 10, [9])].map((c) => ({ ...c, hashes: new Map([[9, 'x9']]) })), all(4), rule);
    assert.equal(q.head, 9);
  });
});
