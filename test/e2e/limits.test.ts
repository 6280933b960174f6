import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { createPublicClient, http } from 'viem';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { offerLoad } from '../helpers/offered-load.ts';

/** Plans small enough to meet in a test, with buckets of one second of their rate (limits.burstSeconds: 1). eth_chainId costs 5 units, eth_blockNumber 10 (their specs, src/methods/specs/). */
const PLANS = {
  tiny: { name: 'Tiny', cuPerSecond: 10, cuPerMonth: 1_000_000, maxBatchSize: 100, debugMethods: false, maxFilters: 10 },
  mini: { name: 'Mini', cuPerSecond: 20, cuPerMonth: 1_000_000, maxBatchSize: 100, debugMethods: false, maxFilters: 10 },
  small: { name: 'Small', cuPerSecond: 100, cuPerMonth: 1_000_000, maxBatchSize: 100, debugMethods: false, maxFilters: 10 },
  quota: { name: 'Quota', cuPerSecond: 10_000, cuPerMonth: 50, maxBatchSize: 100, debugMethods: false, maxFilters: 10 },
  rate: { name: 'Rate', cuPerSecond: 200, cuPerMonth: 1_000_000_000, maxBatchSize: 100, debugMethods: false, maxFilters: 10 },
  nofilters: { name: 'No filters', cuPerSecond: 20, cuPerMonth: 1_000_000, maxBatchSize: 100, debugMethods: false, maxFilters: 0 },
  tracer: { name: 'Growth-like', cuPerSecond: 660, cuPerMonth: 1_000_000_000, maxBatchSize: 100, debugMethods: true, maxFilters: 10 },
};
const chainId = (id: unknown = 1) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] });

async function keyOn(g: TestGateway, planId: string): Promise<string> {
  const acct = await g.gw.accounts.createAccount({ name: planId, email: `${planId}-${Math.random()}@example.com`, planId });
  return (await g.gw.accounts.createKey(acct.id, { name: planId })).value;
}

describe('plan limits on the wire (memory backend)', () => {
  let g: TestGateway;
  before(async () => {
    g = await startTestGateway({ plans: PLANS, accounts: { defaultPlan: 'small' }, limits: { burstSeconds: 1, usageFlushMs: 200, unknownKeys: { perSecond: 1, burst: 5 } }, networks: { mainnet: { chainId: 1 } } });
  });
  after(() => g?.close());

  test('every authenticated response carries RateLimit-Limit, -Remaining and -Reset', async () => {
    const key = await keyOn(g, 'small');
    const r = await g.rpc(chainId(), { key });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('ratelimit-limit'), '100');
    assert.equal(r.headers.get('ratelimit-remaining'), '95');
    assert.equal(r.headers.get('ratelimit-reset'), '1');
  });

  test('over the per-second limit: 429, -32005, data {limit, window, retryAfter}, Retry-After', async () => {
    const key = await keyOn(g, 'tiny');
    // A burst of 10 units admits two eth_chainId at once; the third is refused (refilling 5 units takes 0.5 s).
    assert.equal((await g.rpc([chainId(1), chainId(2)], { key })).status, 200);
    const r = await g.rpc(chainId(7), { key });
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '1');
    // Refused because the bucket held less than the call's 5 units; not asserted as 0, since on a busy machine
    // a unit or more refills between the batch and this call.
    assert.ok(Number(r.headers.get('ratelimit-remaining')) < 5, `remaining ${r.headers.get('ratelimit-remaining')}`);
    assert.deepEqual(Object.keys(r.body).sort(), ['error', 'id', 'jsonrpc']);
    // A body under 1 KiB costs no units to read: the request is limited once, after framing, so the refusal
    // carries its id (a larger body is refused at admission, before its id is read).
    assert.equal(r.body.id, 7);
    assert.equal(r.body.error.code, -32005);
    assert.equal(r.body.error.message, 'limit exceeded: 10 compute units per second');
    const { reason, detail, limit, window, retryAfter } = r.body.error.data;
    assert.deepEqual({ reason, detail, limit, window }, { reason: 'limit_exceeded', detail: '10 compute units per second', limit: 10, window: 'second' });
    assert.equal(retryAfter, 1, "whole seconds, as Retry-After: one call's 5 units at 10/s take 0.5 s");
    // Waiting that long is enough.
    await new Promise((res) => setTimeout(res, retryAfter * 1000));
    assert.equal((await g.rpc(chainId(8), { key })).status, 200);
  });

  test('a trace dearer than the bucket passes on a full bucket (660 units against 1,000); Retry-After admits the next', async () => {
    const key = await keyOn(g, 'tracer');
    const trace = (id: number) => ({ jsonrpc: '2.0', id, method: 'debug_traceCall', params: [{ to: '0x0000000000000000000000000000000000000001' }, 'latest'] });
    const first = await g.rpc(trace(1), { key });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.headers.get('ratelimit-limit'), '660');
    assert.equal(first.headers.get('ratelimit-remaining'), '0');
    const refused = await g.rpc(trace(2), { key });
    assert.equal(refused.status, 429);
    const retryAfter = refused.body.error.data.retryAfter;
    assert.equal(refused.headers.get('retry-after'), String(retryAfter), 'Retry-After and data.retryAfter agree');
    // 340 units owed past the bucket, then a full bucket: up to 1.52 s at 660/s (less what refilled since), whole seconds.
    assert.ok(retryAfter === 1 || retryAfter === 2, `retryAfter ${retryAfter}`);
    assert.ok(Number(refused.headers.get('ratelimit-remaining')) <= Number(refused.headers.get('ratelimit-limit')));
    await new Promise((res) => setTimeout(res, retryAfter * 1000));
    assert.equal((await g.rpc(trace(3), { key })).status, 200, 'waiting Retry-After admits the same call');
  });

  test("an account's keys share its per-second bucket: a second key is not a second bucket", async () => {
    const acct = await g.gw.accounts.createAccount({ name: 'two keys', email: `two-keys-${Math.random()}@example.com`, planId: 'tiny' });
    const [a, b] = [(await g.gw.accounts.createKey(acct.id, { name: 'a' })).value, (await g.gw.accounts.createKey(acct.id, { name: 'b' })).value];
    assert.equal((await g.rpc([chainId(1), chainId(2)], { key: a })).status, 200, "key a spends the account's 10 units");
    const r = await g.rpc(chainId(3), { key: b });
    assert.equal(r.status, 429, 'key b finds the bucket spent');
    assert.equal(r.body.error.data.window, 'second');
  });

  test('refused items cost one unit, not their method\'s: parse errors, invalid params, unknown methods, debug off-plan', async () => {
    const key = await keyOn(g, 'small');
    const first = await g.rpc(chainId(), { key });
    const before = Number(first.headers.get('ratelimit-remaining'));
    await g.rpc('{nope', { key });
    await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: ['0x12'] }, { key });
    await g.rpc({ jsonrpc: '2.0', id: 1, method: 'evm_mine', params: [] }, { key });
    await g.rpc({ jsonrpc: '2.0', id: 1, method: 'debug_traceCall', params: [{}, 'latest'] }, { key }); // 403: no debug on Small
    const after = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: ['0x12'] }, { key });
    // Five refusals spent five units (a debug call would have been 1,000), less what time refilled meanwhile.
    const remaining = Number(after.headers.get('ratelimit-remaining'));
    assert.ok(remaining >= before - 5 && remaining < 100, `${remaining} between ${before - 5} and the full bucket`);
  });

  test("a filter refused for the plan's count costs what an invalid item costs, not eth_newBlockFilter's 20 units", async () => {
    const key = await keyOn(g, 'nofilters'); // 20 units, refilling 20 per second; no filters at all
    const refused = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_newBlockFilter', params: [] }, { key });
    assert.equal(refused.body.error.data.reason, 'filter_limit');
    // Charged 20 to be admitted, 19 given back: an eth_chainId (5) passes at once with at least 13 left. Charged
    // the whole 20, the bucket would be empty and the call refused for a quarter of a second.
    const next = await g.rpc(chainId(2), { key });
    assert.equal(next.status, 200);
    assert.ok(Number(next.headers.get('ratelimit-remaining')) >= 13, `remaining ${next.headers.get('ratelimit-remaining')}`);
  });

  test('a flood of invalid items is limited like any other work', async () => {
    const key = await keyOn(g, 'tiny'); // 10 units, refilling 10 per second
    const invalid = Array.from({ length: 10 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'nope', params: [] }));
    const flood = await g.rpc(invalid, { key });
    assert.equal(flood.status, 200);
    assert.ok(flood.body.every((x: any) => x.error.code === -32601));
    assert.equal(flood.headers.get('ratelimit-remaining'), '0', 'ten invalid items spent the ten units');
    assert.equal((await g.rpc(invalid, { key })).status, 429, 'the next flood is refused');
  });

  test('a batch is costed as the sum of its items: over the remaining budget it is refused whole with 429', async () => {
    const key = await keyOn(g, 'mini');
    // 20 units of burst at 20 per second; two eth_chainId spend 10.
    const t0 = Date.now();
    const first = await g.rpc([chainId(1), chainId(2)], { key });
    assert.equal(first.headers.get('ratelimit-remaining'), '10');
    const over = await g.rpc([chainId(3), chainId(4), chainId(5)], { key });
    assert.equal(over.status, 429);
    assert.ok(!Array.isArray(over.body), 'one error object for the whole batch');
    assert.equal(over.body.id, null);
    assert.equal(over.body.error.code, -32005);
    // Nothing was spent by the refusal: a batch within what remains passes, and is counted per item.
    const ok = await g.rpc([chainId(6), chainId(7)], { key });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body.map((x: any) => x.result), ['0x1', '0x1']);
    // 20 units spent in all: what is left is what refilled since the first batch (20 a second), however slow the machine.
    const refilled = Math.ceil((20 * (Date.now() - t0)) / 1000);
    assert.ok(Number(ok.headers.get('ratelimit-remaining')) <= Math.min(refilled, 10), `20 units spent, at most the ${refilled} refilled since left: ${ok.headers.get('ratelimit-remaining')}`);
  });

  test('unknown keys are limited per client IP: 401 until the burst is spent, then 429; a valid key from that IP still passes', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await g.rpc(chainId(), { key: 'ngk_' + String(i).repeat(43) })).status);
    assert.deepEqual(statuses.slice(0, 5), [401, 401, 401, 401, 401]);
    assert.equal(statuses[6], 429);
    assert.ok(Number((await g.rpc(chainId(), { key: 'ngk_' + '9'.repeat(43) })).headers.get('retry-after')) >= 1);
    // A valid key from that address is never refused for it (one NAT, one office): only failures are limited.
    const r = await g.rpc(chainId(), { key: g.key });
    assert.equal(r.status, 200);
    assert.equal(r.body.result, '0x1');
  });
});

describe('monthly quota', () => {
  test('a plan with a small monthly quota is refused once it is spent, and still after a restart', async () => {
    let g = await startTestGateway({ plans: PLANS, accounts: { defaultPlan: 'quota' }, limits: { usageFlushMs: 100 }, networks: { mainnet: { chainId: 1 } } });
    const dataDir = g.dataDir;
    const key = g.key;
    try {
      // 50 units: ten eth_chainId.
      for (let i = 0; i < 10; i++) assert.equal((await g.rpc(chainId(i), { key })).status, 200, `call ${i}`);
      const r = await g.rpc(chainId(99), { key });
      assert.equal(r.status, 429);
      assert.equal(r.body.error.data.window, 'month');
      assert.equal(r.body.error.data.limit, 50);
      assert.ok(r.body.error.data.retryAfter > 0 && r.body.error.data.retryAfter <= 31 * 86400);
      assert.equal(r.headers.get('retry-after'), String(r.body.error.data.retryAfter));
    } finally {
      await g.gw.close(); // flushes usage; the data directory stays
    }
    g = await startTestGateway({ dataDir, plans: PLANS, accounts: { defaultPlan: 'quota' }, networks: { mainnet: { chainId: 1 } } });
    try {
      const r = await g.rpc(chainId(), { key });
      assert.equal(r.status, 429);
      assert.equal(r.body.error.data.window, 'month');
    } finally {
      await g.close();
    }
  });
});

describe('accuracy and clients', () => {
  let g: TestGateway;
  before(async () => {
    g = await startTestGateway({ plans: PLANS, accounts: { defaultPlan: 'rate' }, limits: { burstSeconds: 1 }, networks: { mainnet: { chainId: 1 } } });
  });
  after(() => g?.close());

  test('offered 3N units per second for 10 s, a key with N per second gets N per second (plus the burst)', async () => {
    const key = await keyOn(g, 'rate');
    const N = 200; // units per second; eth_chainId costs 5, so 40 calls a second, and 120 offered
    const seconds = 10;
    const perCall = 5;
    // Every refusal must say why: the bucket held less than the call's units (a refusal with room is a bug).
    const roomAtRefusal: number[] = [];
    // A few keep-alive connections, as a client library keeps: on a busy machine the offered calls fall behind and
    // are sent in clumps, and a new connection for each one of a clump of hundreds times out connecting.
    const agent = new Agent({ connections: 16 });
    const { admitted, elapsed } = await offerLoad((3 * N) / perCall, seconds, async (i) => {
      const r = await request(`${g.url}/v1/mainnet/${key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chainId(i)), dispatcher: agent });
      await r.body.dump();
      if (r.statusCode !== 200) roomAtRefusal.push(Number(r.headers['ratelimit-remaining']));
      return r.statusCode === 200;
    }).finally(() => agent.close());
    const total = admitted * perCall;
    console.log(`limits accuracy (memory): N=${N} CU/s, offered ${3 * N} CU/s for ${elapsed.toFixed(1)} s; admitted ${total} CU = ${(total / elapsed).toFixed(1)} CU/s, ${roomAtRefusal.length} refused`);
    const burst = N;
    // A busy machine can only slow the offered load down, never speed the limiter up: the ceiling holds at any load.
    assert.ok(total <= 1.1 * N * elapsed + burst, `at most 1.1N per second plus the burst: ${total}`);
    // The floor is structural, not a rate (a stalled event loop delivers the offered calls in clumps, and a clump
    // past the bucket is refused however exact the limiter is; the rate itself is exact in the limiter's contract
    // test, on an injected clock): the full bucket was admitted, calls were refused, and none with room for it.
    assert.ok(total >= burst, `at least the burst was admitted: ${total}`);
    assert.ok(roomAtRefusal.length > 0, 'offered 3N, some calls were refused');
    assert.ok(roomAtRefusal.every((room) => room < perCall), `refused with room in the bucket: ${roomAtRefusal.filter((room) => room >= perCall)}`);
  });

  test('viem honours Retry-After: a client on a limited key finishes all its calls by retrying', async () => {
    const key = await keyOn(g, 'rate');
    const client = createPublicClient({ transport: http(`${g.url}/v1/mainnet/${key}`, { retryCount: 30, retryDelay: 50 }) });
    // 80 eth_chainId calls = 400 units at 200 per second: about a second past the burst, so some are refused and retried.
    const results = await Promise.all(Array.from({ length: 80 }, () => client.request({ method: 'eth_chainId' })));
    assert.equal(results.length, 80);
    assert.ok(results.every((r) => r === '0x1'));
  });
});
