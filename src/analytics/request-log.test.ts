import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { sqliteStores } from '../store/open-store.ts';
import { clippedJson, jsonWithin } from './clipped-json.ts';
import { RequestLog, SAMPLE_EVERY, type CallSeen } from './request-log.ts';

const silent = pino({ level: 'silent' });
const call = (over: Partial<CallSeen> = {}): CallSeen => ({
  accountId: 'tenant', keyId: 'k1', network: 'mainnet', method: 'eth_call', code: 0, message: undefined, latencyMs: 3.2,
  computeUnits: 26, requestBytes: 120, responseBytes: 90, cache: undefined, node: 'node-a', requestId: 'r', params: [{ to: '0x01' }, 'latest'], ...over,
});
const plan = { requestLogHours: 24, requestLogMax: 10_000 };

test('1,000,000 requests of one account leave the store within its plan\'s bound', async () => {
  const store = sqliteStores(':memory:');
  let t = Date.parse('2026-03-01T10:00:00Z');
  const log = new RequestLog(store, { flushMs: 600_000, maxBuffered: 20_000, maxParamsChars: 512, maxMessageChars: 256, maxRecordsPerSecond: 1_000_000 }, silent, () => t);
  const seen = call();
  let most = 0;
  for (let i = 0; i < 1_000_000; i++) {
    // A call a millisecond for 16 minutes, flushed every 10 s of its clock (explorer.flushMs is 1 s by default: fewer, larger flushes keep the test short).
    t++;
    seen.requestId = `r-${i}`;
    log.record(seen, plan);
    if (i % 10_000 === 9_999) {
      await log.flush();
      if (i % 100_000 === 99_999) most = Math.max(most, await store.requests.countRequests('tenant'));
    }
  }
  await log.flush();
  const held = await store.requests.countRequests();
  const { recorded, sampledOut, dropped, unwritten } = log.stats;
  console.log(`1,000,000 calls of one account: ${recorded} recorded, ${sampledOut} sampled out (1 in ${SAMPLE_EVERY} past ${Math.ceil(plan.requestLogMax / 60)} a minute), ${dropped} dropped; the store holds ${held} records (bound: requestLogMax ${plan.requestLogMax})`);
  assert.equal(recorded + sampledOut + dropped, 1_000_000, 'every call is kept, sampled out or dropped, and counted');
  assert.equal(unwritten, 0);
  assert.ok(held <= plan.requestLogMax && most <= plan.requestLogMax, `held ${held}, at most ${most} at a check`);
  assert.ok(held >= plan.requestLogMax * 0.9, 'the bound is the newest records, not an empty table');
  const newest = await store.requests.listRequests({ accountId: 'tenant', limit: 1 });
  assert.ok(Number(newest[0].requestId.slice(2)) > 1_000_000 - SAMPLE_EVERY, `the newest records are kept: ${newest[0].requestId}`);
  await log.close();
  await store.close();
});

test('the time bound: an account keeps no record older than its plan\'s hours', async () => {
  const store = sqliteStores(':memory:');
  let t = Date.parse('2026-03-01T10:00:00Z');
  const log = new RequestLog(store, { flushMs: 600_000, maxBuffered: 1000, maxParamsChars: 512, maxMessageChars: 256, maxRecordsPerSecond: 1_000_000 }, silent, () => t);
  log.record(call({ requestId: 'old' }), { requestLogHours: 1, requestLogMax: 100 });
  await log.flush();
  t += 2 * 3_600_000;
  log.record(call({ requestId: 'new' }), { requestLogHours: 1, requestLogMax: 100 });
  await log.flush();
  assert.deepEqual((await store.requests.listRequests({ limit: 10 })).map((r) => r.requestId), ['new']);
  await log.close();
  await store.close();
});

test('past the buffer\'s bound calls are dropped and counted; a plan that keeps none records none', async () => {
  const store = sqliteStores(':memory:');
  const log = new RequestLog(store, { flushMs: 600_000, maxBuffered: 100, maxParamsChars: 512, maxMessageChars: 256, maxRecordsPerSecond: 1_000_000 }, silent);
  for (let i = 0; i < 150; i++) log.record(call({ accountId: `a${i}` }), plan);
  assert.deepEqual([log.stats.recorded, log.stats.dropped], [100, 50]);
  log.record(call({ accountId: 'none' }), { requestLogHours: 24, requestLogMax: 0 });
  await log.flush();
  assert.equal(await store.requests.countRequests(), 100);
  assert.equal(await store.requests.countRequests('none'), 0);
  await log.close();
  await store.close();
});

test('params and errors are cut as they are recorded: a megabyte of params costs its first characters', () => {
  const big = [{ data: '0x' + 'ab'.repeat(500_000) }, 'latest'];
  const cut = clippedJson(big, 64);
  assert.equal(cut.length, 65);
  assert.ok(cut.startsWith('[{"data":"0xabab') && cut.endsWith('…'));
  assert.equal(clippedJson([1, 'two', { three: null }, true], 100), JSON.stringify([1, 'two', { three: null }, true]));
  assert.equal(jsonWithin(big, 512), false);
  assert.equal(jsonWithin([{ to: '0x01' }, 'latest'], 512), true);
});

test('a recorded call keeps its params as JSON and its error cut', async () => {
  const store = sqliteStores(':memory:');
  const log = new RequestLog(store, { flushMs: 600_000, maxBuffered: 100, maxParamsChars: 40, maxMessageChars: 8, maxRecordsPerSecond: 1_000_000 }, silent);
  log.record(call({ requestId: 'small', code: 3, message: 'execution reverted' }), plan);
  log.record(call({ requestId: 'large', params: [{ data: '0x' + 'ab'.repeat(100) }] }), plan);
  await log.flush();
  const [large, small] = await store.requests.listRequests({ limit: 10 });
  assert.equal(small.params, '[{"to":"0x01"},"latest"]');
  assert.equal(small.message, 'executio…');
  assert.equal(large.params, '[{"data":"0xabababababababababababababab…');
  await log.close();
  await store.close();
});

test('past the instance\'s records a second, every account is sampled for the rest of that second', async () => {
  const store = sqliteStores(':memory:');
  let t = Date.parse('2026-03-01T10:00:00.000Z');
  const log = new RequestLog(store, { flushMs: 600_000, maxBuffered: 20_000, maxParamsChars: 512, maxMessageChars: 256, maxRecordsPerSecond: 1000 }, silent, () => t);
  // 3,000 accounts, one call each (each well within its own share), in one second; then 3,000 more in the next.
  for (let i = 0; i < 3000; i++) log.record(call({ accountId: `a${i}`, requestId: `r${i}` }), plan);
  assert.deepEqual([log.stats.recorded, log.stats.sampledOut], [1000 + 20, 1980], '1,000, then 1 in 100 of the 2,000 past it');
  t += 1000;
  for (let i = 0; i < 3000; i++) log.record(call({ accountId: `b${i}`, requestId: `s${i}` }), plan);
  assert.equal(log.stats.recorded, 2 * 1020, 'the next second has its own 1,000');
  await log.flush();
  const kept = await store.requests.listRequests({ limit: 5000 });
  assert.equal(kept.length, 2 * 1020);
  assert.equal(kept.filter((r) => r.sampleEvery === SAMPLE_EVERY).length, 40, 'the calls kept past the bound say they stand for 100');
  await log.close();
  await store.close();
});
