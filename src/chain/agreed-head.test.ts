import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agreedHead, believableUpTo, HEAD_BOUND } from './agreed-head.ts';

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
