import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Next } from '../rpc/adapters/adapter.ts';
import type { RequestContext } from '../rpc/pipeline.ts';
import { Filters } from './filters.ts';
import { MemoryFilterStore } from './memory-filter-store.ts';

/** A chain of `head` blocks whose hashes are their numbers; answers after a turn of the event loop, as a node does. */
function fakeNode(chain: { head: number }): Next {
  const block = (n: number) => ({ number: `0x${n.toString(16)}`, hash: `0x${n.toString(16).padStart(64, '0')}` });
  return async (method, params) => {
    await new Promise((r) => setImmediate(r));
    if (method === 'eth_getBlockByNumber') return { result: block(params[0] === 'latest' ? chain.head : Number(params[0])) };
    return { result: null };
  };
}

const ctx = { key: { key: { id: 'k1' }, plan: { maxFilters: 10 } }, network: { name: 'mainnet', methods: new Map() } } as unknown as RequestContext;

describe('filters: polls of one filter', () => {
  it('concurrent polls report each new block once, in order', async () => {
    const store = new MemoryFilterStore();
    const methods = new Filters(store, 60_000).methods();
    const chain = { head: 5 };
    const next = fakeNode(chain);
    const id = (await methods.eth_newBlockFilter(ctx, [], next)).result;
    chain.head = 9;
    const polls = await Promise.all([1, 2, 3].map(() => methods.eth_getFilterChanges(ctx, [id], next)));
    const reported = polls.flatMap((p) => p.result as string[]).map(Number);
    assert.deepEqual(reported, [6, 7, 8, 9]);
    assert.deepEqual(polls.map((p) => (p.result as string[]).length), [4, 0, 0], 'the first poll has them all, the others nothing');
    await store.close();
  });
});
