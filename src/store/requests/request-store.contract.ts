import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isIso, storePerTest, type StoreContract } from '../fixtures.contract.ts';
import type { RequestRecord } from './request-record.ts';

const record = (over: Partial<RequestRecord> = {}): RequestRecord => ({
  at: '2026-11-29T12:00:00.000Z', accountId: 'a1', keyId: 'k1', network: 'mainnet', method: 'eth_call', code: 0, message: null,
  latencyMs: 12.5, computeUnits: 26, requestBytes: 120, responseBytes: 80, cache: null, node: 'node-a', requestId: 'r-1',
  params: '[{"to":"0x00"},"latest"]', sampleEvery: 1, ...over,
});

const none = new Map<string, never>();

/** The request explorer part of the store contract (fixtures.contract.ts), run on SQLite and PostgreSQL. */
export function requestStoreContract(c: StoreContract): void {
  describe('request store', () => {
    const store = storePerTest(c);

    test('keeps a record as written and finds it by its request id', async () => {
      const written = record({ code: -32000, message: 'execution reverted', cache: 'MISS', requestId: 'find-me' });
      await store.requests.addRequests([record(), written, record({ accountId: 'a2', requestId: 'find-me' })], none);
      const [found, ...more] = await store.requests.listRequests({ accountId: 'a1', requestId: 'find-me', limit: 10 });
      assert.equal(more.length, 0, 'another account\'s record with the same request id is not the caller\'s');
      const { id, ...rest } = found;
      assert.ok(id);
      isIso(found.at);
      assert.deepEqual(rest, written);
    });

    test('lists newest first, by filters, in pages by cursor', async () => {
      const many = Array.from({ length: 7 }, (_, i) => record({ requestId: `r-${i}`, method: i % 2 ? 'eth_call' : 'eth_chainId', code: i === 3 ? 3 : 0, at: `2026-11-29T12:00:0${i}.000Z` }));
      await store.requests.addRequests(many, none);
      const first = await store.requests.listRequests({ accountId: 'a1', limit: 3 });
      assert.deepEqual(first.map((r) => r.requestId), ['r-6', 'r-5', 'r-4']);
      const next = await store.requests.listRequests({ accountId: 'a1', limit: 3, before: first[2].id });
      assert.deepEqual(next.map((r) => r.requestId), ['r-3', 'r-2', 'r-1']);
      assert.deepEqual((await store.requests.listRequests({ accountId: 'a1', method: 'eth_call', outcome: 'ok', limit: 10 })).map((r) => r.requestId), ['r-5', 'r-1']);
      assert.deepEqual((await store.requests.listRequests({ accountId: 'a1', outcome: 'error', limit: 10 })).map((r) => r.requestId), ['r-3']);
      assert.deepEqual((await store.requests.listRequests({ accountId: 'a1', outcome: 3, limit: 10 })).map((r) => r.requestId), ['r-3']);
      const window = await store.requests.listRequests({ from: '2026-11-29T12:00:02.000Z', to: '2026-11-29T12:00:04.000Z', limit: 10 });
      assert.deepEqual(window.map((r) => r.requestId), ['r-3', 'r-2']);
    });

    test('drops an account\'s oldest records and those past their time in the same write, leaving others alone', async () => {
      await store.requests.addRequests([record({ accountId: 'a2', at: '2026-11-29T11:00:00.000Z' })], none);
      const ten = Array.from({ length: 10 }, (_, i) => record({ requestId: `r-${i}`, at: `2026-11-29T12:00:0${i}.000Z` }));
      const aged = await store.requests.addRequests(ten, new Map([['a1', { oldest: 6, since: '2026-11-29T12:00:07.000Z' }]]));
      assert.deepEqual((await store.requests.listRequests({ accountId: 'a1', limit: 10 })).map((r) => r.requestId), ['r-9', 'r-8', 'r-7']);
      assert.deepEqual([...aged], [['a1', 1]], 'r-6 went for its age, r-0 to r-5 as the oldest');
      assert.equal(await store.requests.countRequests('a2'), 1, 'an account not in the batch is left alone');
      assert.equal(await store.requests.pruneRequests('2026-11-29T11:30:00.000Z'), 1);
      assert.equal(await store.requests.countRequests(), 3);
    });

    test('counts many accounts at once, and drops the aged records of many accounts of one bound in one write', async () => {
      // 1,200 accounts: past one statement's share, so the count and the drop are each split.
      const ids = Array.from({ length: 1200 }, (_, i) => `m${i}`);
      await store.requests.addRequests(ids.flatMap((id, i) => [record({ accountId: id, at: '2026-11-29T10:00:00.000Z' }), ...(i % 2 ? [record({ accountId: id })] : [])]), none);
      const counts = await store.requests.countRequestsOf([...ids, 'nobody']);
      assert.deepEqual([counts.get('m0'), counts.get('m1'), counts.get('m1199'), counts.has('nobody')], [1, 2, 2, false]);
      const since = '2026-11-29T11:00:00.000Z';
      const aged = await store.requests.addRequests([], new Map(ids.map((id) => [id, { oldest: 0, since }])));
      assert.equal(aged.size, 1200, 'each account had one record past its time');
      assert.equal(aged.get('m1199'), 1);
      const left = await store.requests.countRequestsOf(ids);
      assert.deepEqual([left.has('m0'), left.get('m1'), left.get('m1199')], [false, 1, 1], 'the recent records stay');
    });
  });
}
