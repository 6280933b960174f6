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
    const spy: Upstream = { label: 'spy', call: (m, p, t) => { calls.push(m); return node.call(m, p); }, close: async () => {} };
    const chain = new Chain('t', 1, [new UpstreamMember(spy, { role: 'primary', weight: 1 }, 0)], { breakerFailures: 3, breakerCooldownMs: 1000, maxLagBlocks: 5 }, 0, 60_000, pino({ level: 'silent' }));
    await chain.start();
    node.blocks.push('a2');
    await chain.check();
    chain.stop();
    assert.deepEqual([...new Set(calls)].sort(), ['eth_blockNumber', 'eth_chainId']);
  });
});
