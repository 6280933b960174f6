import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import type { Upstream, UpstreamAnswer } from '../upstream/upstream.ts';
import { Chain, type BlockRef } from './chain.ts';
import { UpstreamMember } from './upstream-member.ts';

const hex = (n: number) => `0x${n.toString(16)}`;

/** A node serving a chain the test rewrites: `blocks[n]` is the hash of block n; parents follow the array. */
class ScriptedNode implements Upstream {
  readonly label = 'scripted';
  blocks: string[] = [];
  async call(method: string, params: unknown[]): Promise<UpstreamAnswer> {
    if (method === 'eth_chainId') return { result: '0x1' };
    if (method === 'eth_blockNumber') return { result: hex(this.blocks.length - 1) };
    if (method === 'eth_getBlockByNumber') {
      const n = params[0] === 'latest' ? this.blocks.length - 1 : Number(params[0]);
      const hash = this.blocks[n];
      return { result: hash ? { number: hex(n), hash, parentHash: n > 0 ? this.blocks[n - 1] : '0x0' } : null };
    }
    throw new Error(`unexpected ${method}`);
  }
  async close(): Promise<void> {}
}

describe('the chain module follows blocks for its subscribers', () => {
  test('each new block once, in order; a reorganisation names the dropped blocks before the new branch comes', async () => {
    const node = new ScriptedNode();
    node.blocks = ['a0', 'a1', 'a2', 'a3'];
    const chain = new Chain('t', 1, [new UpstreamMember(node, { role: 'primary', weight: 1 }, 0)], { breakerFailures: 3, breakerCooldownMs: 1000, maxLagBlocks: 5 }, 0, 60_000, pino({ level: 'silent' }));
    const events: string[] = [];
    chain.on('block', (b: BlockRef) => events.push(`block ${b.number} ${b.hash}`));
    chain.on('reorg', (r) => events.push(`reorg ${r.from}→${r.to} depth ${r.depth}: ${r.dropped?.map((b) => b.hash).join(',')}`));
    await chain.start();
    await chain.check(); // following starts at the head: block 3 is not announced
    node.blocks.push('a4', 'a5');
    await chain.check();
    // Block 5 replaced at the same height, and a block on top of it.
    node.blocks.splice(5, 1, 'b5', 'b6');
    await chain.check();
    // Deeper: everything from block 4 replaced by a longer branch.
    node.blocks.splice(4, 3, 'c4', 'c5', 'c6', 'c7');
    await chain.check();
    chain.stop();
    assert.deepEqual(events, [
      'block 4 a4', 'block 5 a5',
      'reorg 5→4 depth 1: a5', 'block 5 b5', 'block 6 b6',
      'reorg 6→3 depth 3: a4,b5,b6', 'block 4 c4', 'block 5 c5', 'block 6 c6', 'block 7 c7',
    ]);
  });

  test('nobody listening for blocks: no block is read beyond the checks', async () => {
    const node = new ScriptedNode();
    node.blocks = ['a0', 'a1'];
    const calls: string[] = [];
    const spy: Upstream = { label: 'spy', call: (m, p) => { calls.push(m); return node.call(m, p); }, close: async () => {} };
    const chain = new Chain('t', 1, [new UpstreamMember(spy, { role: 'primary', weight: 1 }, 0)], { breakerFailures: 3, breakerCooldownMs: 1000, maxLagBlocks: 5 }, 0, 60_000, pino({ level: 'silent' }));
    await chain.start();
    node.blocks.push('a2');
    await chain.check();
    chain.stop();
    assert.deepEqual([...new Set(calls)].sort(), ['eth_blockNumber', 'eth_chainId']);
  });
});

/**
 * A node whose head the test sets (its latest block says that number, as a lying node's does), and which has
 * (serves) blocks up to `has`; blocks above `branchFrom` are of a branch of its own (another hash).
 */
class HeadNode implements Upstream {
  calls: string[] = [];
  branchFrom = Infinity;
  /** Its branch's mark in the hashes above `branchFrom` (nodes on branches of their own: other marks). */
  branch = 'b';
  constructor(readonly label: string, public head: number, public has = head) {}
  private hashOf(n: number): string {
    return n > this.branchFrom ? `0x${this.branch}${n}` : `0x${n}`;
  }
  async call(method: string, params: unknown[]): Promise<UpstreamAnswer> {
    this.calls.push(method);
    if (method === 'eth_chainId') return { result: '0x1' };
    if (method === 'eth_blockNumber') return { result: hex(this.head) };
    if (method === 'eth_getBlockByNumber') {
      const n = params[0] === 'latest' ? this.head : Number(params[0]);
      return { result: n <= this.has || params[0] === 'latest' ? { number: hex(n), hash: this.hashOf(n), parentHash: this.hashOf(n - 1) } : null };
    }
    throw new Error(`unexpected ${method}`);
  }
  async close(): Promise<void> {}
}

const LIE = 1_000_000_000_000;
const chainOf = (nodes: HeadNode[], roles: Array<'primary' | 'fallback'> = [], quorum = 2) =>
  new Chain('t', 1, nodes.map((n, i) => new UpstreamMember(n, { role: roles[i] ?? 'primary', weight: 1 }, i)), { breakerFailures: 3, breakerCooldownMs: 1000, maxLagBlocks: 5, quorum }, 64, 60_000, pino({ level: 'silent' }));

describe('the chain module does not believe a head far ahead of the others', () => {
  for (const liarRole of ['primary', 'fallback'] as const) {
    test(`a ${liarRole} claiming block 10^12: the head stays with the others, the liar is suspect and takes no call`, async () => {
      const liar = new HeadNode('liar', LIE, 100);
      const nodes = liarRole === 'primary' ? [liar, new HeadNode('a', 100), new HeadNode('b', 100)] : [new HeadNode('a', 100), new HeadNode('b', 100), liar];
      const chain = chainOf(nodes, liarRole === 'primary' ? [] : ['primary', 'primary', 'fallback']);
      await chain.start();
      chain.stop();
      liar.calls = [];
      const answers = new Set<unknown>();
      for (let i = 0; i < 50; i++) answers.add(chain.head.seen('eth_blockNumber', [], await chain.call('eth_blockNumber', [], 1000)).result);
      const states = chain.status().map((s) => s.state);
      console.log(`lying ${liarRole}: head ${chain.head.number}, eth_blockNumber answers ${[...answers]}, states ${states}, calls to the liar after start ${liar.calls.length}`);
      assert.equal(chain.head.number, 100);
      assert.deepEqual([...answers], ['0x64']);
      assert.equal(states[nodes.indexOf(liar)], 'suspect');
      assert.equal(liar.calls.length, 0);
    });
  }

  test('a lone node jumping far: held back until it keeps to it and serves that block', async () => {
    const node = new HeadNode('lone', 100);
    const chain = chainOf([node]);
    await chain.start();
    chain.stop();
    node.head = LIE; // claims it, cannot serve it
    for (let i = 0; i < 5; i++) await chain.check();
    const held = chain.head.number;
    const clamped = chain.head.seen('eth_blockNumber', [], { result: hex(LIE) }).result;
    node.has = LIE; // now it has it
    for (let i = 0; i < 4; i++) await chain.check();
    console.log(`lone node: head ${held} while it could not serve block ${LIE} (eth_blockNumber answered ${clamped}); ${chain.head.number} once it served it`);
    assert.equal(held, 100);
    assert.equal(clamped, '0x64');
    assert.equal(chain.head.number, LIE);
  });
});

describe('the head is the highest block a quorum of nodes has with the same hash', () => {
  test('a node that mined a branch of its own, 20 blocks ahead: never the head, forked, takes no call', async () => {
    const fork = new HeadNode('fork', 100);
    const nodes = [new HeadNode('a', 100), fork, new HeadNode('b', 100)];
    const chain = chainOf(nodes);
    await chain.start();
    chain.stop();
    // It mines blocks 101-120 alone. Before the other two have a block 101 to compare, it looks like a node ahead:
    // its height is not the head (eth_blockNumber says the quorum's), and the other two are not lagging (reads and
    // raw transactions still reach them, so what is sent is not left to its branch alone).
    fork.branchFrom = 100;
    fork.head = fork.has = 120;
    await chain.check();
    const early = new Set<unknown>();
    for (let i = 0; i < 30; i++) early.add(chain.head.seen('eth_blockNumber', [], await chain.call('eth_blockNumber', [], 1000)).result);
    assert.deepEqual(chain.status().map((s) => s.state), ['up', 'up', 'up']);
    assert.deepEqual([...early], ['0x64']);
    assert.equal(chain.head.number, 100);
    // The other two mine their own 101: the branch is seen.
    for (const n of [nodes[0], nodes[2]]) n.head = n.has = 101;
    await chain.check();
    fork.calls = [];
    const answers = new Set<unknown>();
    for (let i = 0; i < 30; i++) answers.add(chain.head.seen('eth_blockNumber', [], await chain.call('eth_blockNumber', [], 1000)).result);
    const states = chain.status().map((s) => s.state);
    console.log(`fork: head ${chain.head.number}, eth_blockNumber answers ${[...answers]}, states ${states}, calls to the fork ${fork.calls.length}`);
    assert.equal(chain.head.number, 101);
    assert.deepEqual([...answers], ['0x65']);
    assert.deepEqual(states, ['up', 'forked', 'up']);
    assert.equal(fork.calls.length, 0);
  });

  test('one node a block ahead of the others: the head is the others\' block, and the node ahead still serves', async () => {
    const nodes = [new HeadNode('a', 50), new HeadNode('b', 51), new HeadNode('c', 50)];
    const chain = chainOf(nodes);
    await chain.start();
    chain.stop();
    assert.equal(chain.head.number, 50);
    assert.deepEqual(chain.status().map((s) => s.state), ['up', 'up', 'up']);
    // A block an answer of the node ahead showed holds: the check's lower quorum block is not the chain going back.
    chain.head.advance(51);
    await chain.check();
    await chain.check();
    assert.equal(chain.head.number, 51);
  });

  test('blocks followed for listeners come from the agreed chain: each number once, in order, none of a diverged node', async () => {
    const nodes = [new HeadNode('a', 100), new HeadNode('b', 100), new HeadNode('c', 100)];
    const chain = chainOf(nodes);
    const told: string[] = [];
    let reorgs = 0;
    chain.on('block', (b) => told.push(`${b.number}:${b.hash}`));
    chain.on('reorg', () => reorgs++);
    await chain.start();
    chain.stop();
    await chain.check(); // the window is seeded at the head
    // c mines its own blocks at the same heights from 101 on, a block ahead of the other two.
    Object.assign(nodes[2], { branchFrom: 100, branch: 'c' });
    for (let n = 101; n <= 110; n++) {
      for (const node of nodes) node.head = node.has = node === nodes[2] ? n + 1 : n;
      await chain.check();
    }
    // One of the two stalls at 110 (it still answers): the window goes on with the other.
    for (let n = 111; n <= 113; n++) {
      for (const node of [nodes[1], nodes[2]]) node.head = node.has = node === nodes[2] ? n + 1 : n;
      chain.head.advance(n); // as an answer of the node that goes on showed it
      await chain.check();
    }
    assert.deepEqual(told, Array.from({ length: 13 }, (_, i) => `${101 + i}:0x${101 + i}`));
    assert.equal(reorgs, 0);
    assert.equal(chain.status()[2].state, 'forked');
  });

  test('three nodes on three branches, none agreed: the window reads one node, no reorganisation is made up', async () => {
    const nodes = ['a', 'b', 'c'].map((x) => Object.assign(new HeadNode(x, 100), { branchFrom: 0, branch: x === 'a' ? 'd' : x }));
    const chain = chainOf(nodes);
    let reorgs = 0;
    chain.on('block', () => {});
    chain.on('reorg', () => reorgs++);
    await chain.start();
    chain.stop();
    chain.head.advance(100); // an answer showed block 100 (no quorum agrees on any block)
    for (let i = 0; i < 20; i++) await chain.check();
    assert.equal(reorgs, 0, 'routed as any read, its reads of block 100 went to all three, each another hash');
  });

  test('a quorum of 1: the highest believed head, as before', async () => {
    const chain = chainOf([new HeadNode('a', 50), new HeadNode('b', 52)], [], 1);
    await chain.start();
    chain.stop();
    assert.equal(chain.head.number, 52);
  });
});
