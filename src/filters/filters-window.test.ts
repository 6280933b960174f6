import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChainWindow, type BlockRef } from '../chain/chain-window.ts';
import type { Next } from '../methods/adapters/adapter.ts';
import { Filters, type FilterContext } from './filters.ts';
import { MemoryFilterStore } from '../shared-state/filter-store/memory-filter-store.ts';

/** A chain the test rewrites (`hashes[n]`: block n's hash, parents follow), with one log per block; counts reads. */
class Node {
  hashes = ['a0', 'a1', 'a2', 'a3', 'a4', 'a5'];
  byNumber = 0;
  block(n: number): BlockRef | undefined {
    const hash = this.hashes[n];
    return hash === undefined ? undefined : { number: n, hash, parentHash: n > 0 ? this.hashes[n - 1] : '0x0' };
  }
  readonly next: Next = async (method, params) => {
    await new Promise((r) => setImmediate(r));
    if (method === 'eth_getBlockByNumber') {
      if (params[0] !== 'latest') this.byNumber++;
      const b = this.block(params[0] === 'latest' ? this.hashes.length - 1 : Number(params[0]));
      return { result: b ? { number: `0x${b.number.toString(16)}`, hash: b.hash, parentHash: b.parentHash } : null };
    }
    if (method === 'eth_getLogs') {
      const q = params[0] as { fromBlock: string; toBlock: string };
      const logs = [];
      for (let n = Number(q.fromBlock); n <= Math.min(Number(q.toBlock), this.hashes.length - 1); n++) logs.push({ blockNumber: `0x${n.toString(16)}`, blockHash: this.hashes[n], logIndex: '0x0' });
      return { result: logs };
    }
    return { result: null };
  };
}

/** The network as filters see it: its latest block from the node, and a chain window kept in step with the node. */
function network(node: Node) {
  const window = new ChainWindow(async (n) => node.block(n));
  const follow = async () => {
    const head = node.hashes.length - 1;
    if (window.tip === undefined) return void window.seed(node.block(head)!);
    for (let n = Math.min(window.tip.number, head); n <= head; n++) {
      const r = await window.add(node.block(n)!);
      if (r === 'reorg') return follow();
    }
  };
  const chain = {
    window,
    async latestBlock() {
      const b = node.block(node.hashes.length - 1)!;
      return { number: b.number, hash: b.hash };
    },
  };
  const ctx: FilterContext = { key: { key: { id: 'k1' }, account: { id: 'a1' }, plan: { maxFilters: 10 } }, network: { name: 'mainnet', methods: new Map(), chain } };
  return { ctx, follow };
}

describe('filters read the chain window', () => {
  it('a reorganisation the window holds: removed logs, then the new branch, with no block read from the node', async () => {
    const node = new Node();
    const { ctx, follow } = network(node);
    await follow();
    const methods = new Filters(new MemoryFilterStore(), 60_000).methods();
    const logs = (await methods.eth_newFilter(ctx, [{}], node.next)).result;
    const blocks = (await methods.eth_newBlockFilter(ctx, [], node.next)).result;
    node.hashes.push('a6', 'a7');
    await follow();
    const first = (await methods.eth_getFilterChanges(ctx, [logs], node.next)).result as Array<{ blockHash: string; removed?: boolean }>;
    assert.deepEqual(first.map((l) => l.blockHash), ['a6', 'a7']);
    assert.deepEqual((await methods.eth_getFilterChanges(ctx, [blocks], node.next)).result, ['a6', 'a7']);
    // Blocks 6.. replaced by a longer branch.
    node.hashes.splice(6, 2, 'b6', 'b7', 'b8');
    await follow();
    const after = (await methods.eth_getFilterChanges(ctx, [logs], node.next)).result as Array<{ blockHash: string; removed?: boolean }>;
    assert.deepEqual(after.map((l) => [l.blockHash, l.removed ?? false]), [['a6', true], ['a7', true], ['b6', false], ['b7', false], ['b8', false]]);
    assert.deepEqual((await methods.eth_getFilterChanges(ctx, [blocks], node.next)).result, ['b6', 'b7', 'b8']);
    assert.equal(node.byNumber, 0, 'every canonical hash came from the window');
  });

  it('a window that does not hold the polled head is not believed: the node is asked', async () => {
    const node = new Node();
    const { ctx, follow } = network(node);
    await follow();
    const methods = new Filters(new MemoryFilterStore(), 60_000).methods();
    const logs = (await methods.eth_newFilter(ctx, [{}], node.next)).result;
    node.hashes.push('a6', 'a7');
    await methods.eth_getFilterChanges(ctx, [logs], node.next);
    // The chain reorganises and the window has not read it yet (its tip is block 5, on the old branch).
    node.hashes.splice(6, 2, 'b6', 'b7', 'b8');
    const after = (await methods.eth_getFilterChanges(ctx, [logs], node.next)).result as Array<{ blockHash: string; removed?: boolean }>;
    assert.deepEqual(after.map((l) => [l.blockHash, l.removed ?? false]), [['a6', true], ['a7', true], ['b6', false], ['b7', false], ['b8', false]]);
    assert.ok(node.byNumber > 0, 'the node was asked');
  });
});
