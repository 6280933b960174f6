/**
 * Filters in cluster mode: three gateways in this process on one PostgreSQL and one Redis, in front of
 * one anvil. A filter made on one instance polls on any other (not "filter not found" there), every log and block
 * is reported exactly once whichever instance each poll lands on, an uninstall on one is seen by all, the plan's
 * filters are counted across instances (not per instance, where a cap of 2 would allow 6), and a filter outlives the
 * graceful restart of the instance that made it. A gateway whose Redis does not answer answers filter calls with
 * -32002 filters_unavailable and everything else as usual.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encodeFunctionData } from 'viem';
import { REDIS_URL, redisSkipReason } from '../helpers/redis.ts';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { compileCounter, counterInitCode } from '../helpers/counter.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';

const skip = (await postgresSkipReason('filters shared by instances')) ?? (await redisSkipReason('filters shared by instances'));

interface Log { blockHash: string; logIndex: string; transactionHash: string; removed?: boolean }

describe('filters shared by three instances through Redis', { skip, timeout: 180_000 }, () => {
  let node: TestAnvil;
  let config: Record<string, unknown>;
  const gws: TestGateway[] = [];
  let key = '';
  let from = '';
  let counter = '';
  const increment = () => encodeFunctionData({ abi: compileCounter().abi, functionName: 'increment' });

  /** One JSON-RPC call on instance `i` (0: A, 1: B, 2: C) with the demo key: the whole answer. */
  const rpc = async (i: number, method: string, params: unknown[] = [], k = key) => (await gws[i].rpc({ jsonrpc: '2.0', id: 1, method, params }, { key: k })).body;
  const ok = async <T = any>(i: number, method: string, params: unknown[] = [], k = key): Promise<T> => {
    const body = await rpc(i, method, params, k);
    assert.equal(body.error, undefined, `${method} on instance ${'ABC'[i]}: ${JSON.stringify(body.error)}`);
    return body.result as T;
  };
  /** A transaction through instance `i`, mined (anvil mines each at once): its receipt. */
  const send = async (i: number, tx: Record<string, string>) => {
    const hash = await ok<string>(i, 'eth_sendTransaction', [{ from, ...tx }]);
    for (const end = Date.now() + 10_000; ;) {
      const receipt = await ok<{ blockNumber: string; blockHash: string; contractAddress: string | null; logs: Log[] } | null>(i, 'eth_getTransactionReceipt', [hash]);
      if (receipt) return receipt;
      assert.ok(Date.now() < end, `no receipt for ${hash} within 10 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  before(async () => {
    node = await startAnvil();
    config = {
      networks: { mainnet: { chainId: 1, upstream: node.url } },
      database: { url: await freshDatabase() },
      // A loaded 2-core machine can make Redis answer late; what this suite measures is filters shared, not that.
      limits: { redisUrl: REDIS_URL, redisTimeoutMs: 2000 },
    };
    // A copy each: validateConfig fills in the object it reads.
    for (let i = 0; i < 3; i++) gws.push(await startTestGateway(structuredClone(config)));
    key = gws[0].key; // the first start made the demo key; the others find it in the shared store
    [from] = await ok<string[]>(0, 'eth_accounts');
    counter = (await send(0, { data: counterInitCode(0) })).contractAddress!;
  });
  after(async () => {
    for (const g of gws) await g.close().catch(() => {});
    node?.stop();
  });

  test('a logs and a block filter made on A, polled on A, B and C in turn: every log and block reported once', async () => {
    const logsFilter = await ok<string>(0, 'eth_newFilter', [{ address: counter }]);
    const blockFilter = await ok<string>(0, 'eth_newBlockFilter');
    const first = Number(await ok<string>(0, 'eth_blockNumber'));
    const logs = new Map<string, number>();
    const blocks = new Map<string, number>();
    const mined: Log[] = [];
    const poll = async (i: number) => {
      for (const l of await ok<Log[]>(i, 'eth_getFilterChanges', [logsFilter])) {
        assert.equal(l.removed, false, 'no reorganisation happened: no log is taken back');
        const id = `${l.blockHash}:${l.logIndex}`;
        logs.set(id, (logs.get(id) ?? 0) + 1);
      }
      for (const h of await ok<string[]>(i, 'eth_getFilterChanges', [blockFilter])) blocks.set(h, (blocks.get(h) ?? 0) + 1);
    };
    // 30 rounds: one or two transactions (through any instance), then a poll on the next instance in turn.
    for (let round = 0; round < 30; round++) {
      for (let t = 0; t <= round % 2; t++) mined.push(...(await send((round + t) % 3, { to: counter, data: increment() })).logs);
      await poll(round % 3);
    }
    const last = Number(await ok<string>(0, 'eth_blockNumber'));
    // The instances see the last blocks at their own pace: polled in turn until all is reported (or the time is up).
    for (let i = 0, end = Date.now() + 20_000; (logs.size < mined.length || blocks.size < last - first) && Date.now() < end; i++) await poll(i % 3);
    const canonical = await Promise.all(Array.from({ length: last - first }, async (_, i) => (await ok<{ hash: string }>(0, 'eth_getBlockByNumber', [`0x${(first + 1 + i).toString(16)}`, false])).hash));
    console.log(`# filters on 3 instances: ${mined.length} logs in ${last - first} blocks; reported ${logs.size} logs and ${blocks.size} blocks, ${[...logs.values(), ...blocks.values()].filter((n) => n > 1).length} twice`);
    assert.deepEqual([...logs.keys()].sort(), mined.map((l) => `${l.blockHash}:${l.logIndex}`).sort(), 'every log mined, and only those');
    assert.deepEqual([...blocks.keys()], canonical, 'every block since the filter was made, in order');
    assert.deepEqual([...logs.values(), ...blocks.values()].filter((n) => n !== 1), [], 'each reported exactly once');
  });

  test('a pending-transaction filter made on A reports a transaction sent through B when polled on C, once', async () => {
    const id = await ok<string>(0, 'eth_newPendingTransactionFilter');
    const hash = await ok<string>(1, 'eth_sendTransaction', [{ from, to: '0x000000000000000000000000000000000000dEaD', value: '0x1' }]);
    const reported = [...await ok<string[]>(2, 'eth_getFilterChanges', [id]), ...await ok<string[]>(0, 'eth_getFilterChanges', [id])];
    assert.equal(reported.filter((h) => h === hash).length, 1, `reported ${JSON.stringify(reported)}`);
  });

  test('eth_uninstallFilter on B removes a filter made on A, for A too', async () => {
    const id = await ok<string>(0, 'eth_newBlockFilter');
    assert.deepEqual(await ok(2, 'eth_getFilterChanges', [id]), []);
    assert.equal(await ok(1, 'eth_uninstallFilter', [id]), true);
    assert.deepEqual((await rpc(0, 'eth_getFilterChanges', [id])).error, { code: -32000, message: 'filter not found', data: { reason: 'filter_not_found' } });
    assert.equal(await ok(0, 'eth_uninstallFilter', [id]), false, 'already gone on A');
  });

  test("the plan's filters are counted across instances: a cap of 2 allows 2, not 2 per instance", async () => {
    const g = gws[0].gw;
    await g.accounts.createPlan({ id: 'two-filters', name: 'Two filters', cuPerSecond: 100_000, cuPerMonth: 1_000_000_000, maxBatchSize: 100, debugMethods: false, maxFilters: 2 });
    const account = await g.accounts.createAccount({ name: 'two', email: `two-${Date.now()}@example.com`, planId: 'two-filters' });
    const [k1, k2] = [(await g.accounts.createKey(account.id, { name: 'one' })).value, (await g.accounts.createKey(account.id, { name: 'two' })).value];
    const made = [await ok<string>(0, 'eth_newBlockFilter', [], k1), await ok<string>(1, 'eth_newBlockFilter', [], k2)];
    const refused = [];
    for (const i of [0, 1, 2]) refused.push((await rpc(i, 'eth_newBlockFilter', [], i === 1 ? k1 : k2)).error);
    for (const e of refused) assert.equal(e?.data?.reason, 'filter_limit', `refused on every instance: ${JSON.stringify(e)}`);
    assert.equal(refused[0].code, -32005);
    assert.equal(await ok(2, 'eth_uninstallFilter', [made[0]], k1), true);
    assert.match(await ok<string>(2, 'eth_newBlockFilter', [], k1), /^0x/, 'room again once one is uninstalled, on any instance');
  });

  test("an instance closed and started again: the filters made on it still poll, there and on the others", async () => {
    const id = await ok<string>(2, 'eth_newBlockFilter');
    await gws[2].close();
    gws[2] = await startTestGateway(structuredClone(config));
    const r = await send(0, { to: '0x000000000000000000000000000000000000dEaD', value: '0x1' });
    const seen: string[] = [];
    for (let i = 0, end = Date.now() + 20_000; !seen.includes(r.blockHash) && Date.now() < end; i++) seen.push(...await ok<string[]>(i % 2 ? 0 : 2, 'eth_getFilterChanges', [id]));
    assert.deepEqual(seen, [r.blockHash], 'the block mined after the restart, once');
  });
});

describe('filters in cluster mode while Redis does not answer', { timeout: 60_000 }, () => {
  let g: TestGateway;
  before(async () => {
    // Nothing listens on port 1: the instance starts without Redis (limits fall back to memory).
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } }, limits: { redisUrl: 'redis://127.0.0.1:1', redisTimeoutMs: 200 } });
  });
  after(() => g?.close());

  test('filter calls answer -32002 filters_unavailable; every other call is answered', async () => {
    for (const [method, params] of [['eth_newBlockFilter', []], ['eth_getFilterChanges', ['0x1234']], ['eth_uninstallFilter', ['0x1234']]] as const) {
      const r = await g.rpc({ jsonrpc: '2.0', id: 1, method, params });
      assert.equal(r.status, 503, method);
      assert.equal(r.body.error.code, -32002);
      assert.equal(r.body.error.data.reason, 'filters_unavailable');
      assert.doesNotMatch(r.text, /127\.0\.0\.1|redis:/, 'no address of the Redis in the answer');
    }
    assert.match(await g.call<string>('eth_blockNumber'), /^0x/);
    assert.equal(await g.call<string>('eth_chainId'), '0x1');
  });
});
