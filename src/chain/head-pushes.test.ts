import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import type { Upstream, UpstreamAnswer } from '../upstream/upstream.ts';
import { Chain, type BlockRef } from './chain.ts';
import { UpstreamMember } from './upstream-member.ts';

const hex = (n: number) => `0x${n.toString(16)}`;

/** A node whose chain the test writes (`blocks[n]`: block n's hash), and which pushes each block `mine` adds. */
class PushingNode implements Upstream {
  blocks = ['g0', 'g1', 'g2', 'g3'];
  pushTo: ((header: unknown) => void) | undefined;
  constructor(readonly label: string) {}
  async call(method: string, params: unknown[]): Promise<UpstreamAnswer> {
    if (method === 'eth_chainId') return { result: '0x1' };
    if (method === 'eth_getBlockByNumber') {
      const n = params[0] === 'latest' ? this.blocks.length - 1 : Number(params[0]);
      return { result: this.blocks[n] ? this.header(n) : null };
    }
    return { result: null }; // safe, finalized: none
  }
  header(n: number) {
    return { number: hex(n), hash: this.blocks[n], parentHash: n > 0 ? this.blocks[n - 1] : '0x0' };
  }
  /** Adds blocks; only the last is pushed (the ones before it are blocks a push missed). */
  mine(...hashes: string[]): void {
    this.blocks.push(...hashes);
    this.pushTo?.(this.header(this.blocks.length - 1));
  }
  followHeads(listener: (header: unknown) => void): () => void {
    this.pushTo = listener;
    return () => { this.pushTo = undefined; };
  }
  async close(): Promise<void> {}
}

const policy = { breakerFailures: 3, breakerCooldownMs: 1000, maxLagBlocks: 5, quorum: 0 };

describe("the chain module follows the nodes' pushed heads", () => {
  test('a block pushed by a quorum of nodes is announced at once, a missed one read in order before the next; nothing is subscribed while nobody follows', async () => {
    const nodes = ['a', 'b', 'c'].map((l) => new PushingNode(l));
    // Rounds of checks a minute apart: only the first, at start, runs in this test.
    const chain = new Chain('t', 1, nodes.map((n, i) => new UpstreamMember(n, { role: 'primary', weight: 1 }, i)), policy, 0, 60_000, pino({ level: 'silent' }));
    await chain.start();
    assert.ok(nodes.every((n) => n.pushTo === undefined), 'nobody follows blocks: no subscription on the nodes');
    const blocks: string[] = [];
    const onBlock = (b: BlockRef) => blocks.push(`${b.number} ${b.hash}`);
    chain.on('block', onBlock);
    await chain.followFromNow();
    assert.ok(nodes.every((n) => n.pushTo !== undefined), 'subscribed on every node once blocks are followed');
    nodes[0].mine('g4');
    assert.equal(chain.head.number, 3, 'one node of three is no quorum');
    let next = once(chain, 'block');
    nodes[1].mine('g4');
    await next;
    assert.deepEqual(blocks, ['4 g4']);
    assert.equal(chain.head.number, 4);
    nodes[2].blocks.push('g4'); // the third node has it too, unpushed
    // Block 5 is on every node, but no push told of it; block 6 is pushed.
    for (const n of nodes) n.blocks.push('g5');
    next = new Promise((resolve) => chain.on('block', (b) => b.number === 6 && resolve([b])));
    nodes[2].mine('g6');
    nodes[0].mine('g6');
    await next;
    assert.deepEqual(blocks, ['4 g4', '5 g5', '6 g6'], 'the block no push told of is read, before the next');
    chain.off('block', onBlock);
    chain.removeAllListeners('block');
    await chain.check();
    assert.ok(nodes.every((n) => n.pushTo === undefined), 'nobody follows any more: unsubscribed at the next round');
    chain.stop();
  });
});
