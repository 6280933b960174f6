import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { sqliteStores } from '../store/open-store.ts';
import type { UsageMinute, UsageStore } from '../store/usage/usage-store.ts';
import { UsageRecorder } from './usage-recorder.ts';

test('usage rows whose write fails for the gateway but reached the store are sent again once and counted once', async () => {
  const store = sqliteStores(':memory:');
  // The first write is applied, then its answer is lost (a time-out while the database commits it).
  let lose = true;
  const flaky = Object.create(store.usage, {
    addUsageMinutes: {
      value: async (rows: readonly UsageMinute[], id?: string) => {
        await store.usage.addUsageMinutes(rows, id);
        if (lose) { lose = false; throw new Error('query timed out'); }
      },
    },
  }) as UsageStore;
  const t = Date.parse('2026-03-01T10:00:30Z');
  const recorder = new UsageRecorder(flaky, 60_000, 1000, 20, pino({ level: 'silent' }), () => t);
  for (let i = 0; i < 3; i++) recorder.record('acc-1', 'key-1', 'mainnet', 'eth_call', 0, 26, 5);
  await recorder.flush(); // applied, but the gateway saw it fail
  recorder.record('acc-1', 'key-1', 'mainnet', 'eth_call', 0, 26, 5);
  await recorder.flush(); // the same rows again, then the call that waited behind them
  const rows = await store.usage.listUsageMinutes({ from: '2026-03-01T10:00', to: '2026-03-01T10:01' });
  assert.deepEqual(rows.map((r) => [r.requests, r.computeUnits]), [[4, 104]], 'three calls once, and the fourth');
  assert.deepEqual(recorder.totalsNow().map((x) => x.requests), [4], '/metrics counts each call once');
  await recorder.close();
  await store.close();
});

test('calls of one key over networks, methods and outcomes, however they interleave, each count in their own row', async () => {
  const store = sqliteStores(':memory:');
  const t = Date.parse('2026-03-01T10:00:30Z');
  const calls: Array<[string, string, number]> = [];
  for (const network of ['mainnet', 'sepolia', 'base']) for (const method of ['eth_call', 'eth_getLogs', 'eth_blockNumber']) for (const code of [0, -32000]) calls.push([network, method, code]);
  // The account may make exactly the cells these calls need: a cell made twice would push a call under (other).
  const recorder = new UsageRecorder(store.usage, 60_000, calls.length + 1, 20, pino({ level: 'silent' }), () => t);
  // Each call i made i % 5 + 1 times, in an order that moves every row about in its key's list.
  const expected = new Map<string, number>();
  for (let round = 0; round < 5; round++) {
    for (const [i, [network, method, code]] of calls.entries()) {
      if (round > i % 5) continue;
      recorder.record('acc-1', 'key-1', network, method, code, 1, 1);
      expected.set(`${network} ${method} ${code}`, (expected.get(`${network} ${method} ${code}`) ?? 0) + 1);
    }
    calls.reverse();
  }
  recorder.record('acc-1', 'key-2', 'mainnet', 'eth_call', 0, 1, 1);
  await recorder.flush();
  const rows = await store.usage.listUsageMinutes({ from: '2026-03-01T10:00', to: '2026-03-01T10:01' });
  const key1 = rows.filter((r) => r.keyId === 'key-1');
  assert.equal(key1.length, calls.length, 'one row per network, method and outcome');
  assert.deepEqual(new Map(key1.map((r) => [`${r.network} ${r.method} ${r.code}`, r.requests])), expected);
  assert.deepEqual(rows.filter((r) => r.keyId === 'key-2').map((r) => r.requests), [1]);
  assert.equal(rows.length, calls.length + 1, 'no call counted under (other)');
  await recorder.close();
  await store.close();
});

test("a key's calls over several flushes of one minute, read through its resolution, are counted in one row each and never pushed under (other); the next minute's in a row of their own", async () => {
  const store = sqliteStores(':memory:');
  let t = Date.parse('2026-03-01T10:00:05Z');
  // Exactly the cells the key needs this minute: a cell made again after a flush would push a call under (other).
  const recorder = new UsageRecorder(store.usage, 60_000, 3, 20, pino({ level: 'silent' }), () => t);
  const holder = { usageEpoch: -1, usageCells: undefined, usageCell: undefined, usageAccount: undefined };
  const methods = ['eth_call', 'eth_getLogs', 'eth_blockNumber'];
  for (let flush = 0; flush < 4; flush++) {
    for (const m of methods) recorder.record('acc-1', 'key-1', 'mainnet', m, 0, 2, 1, holder);
    recorder.record('acc-1', 'key-1', 'mainnet', 'eth_call', 0, 2, 1, holder);
    await recorder.flush();
    t += 10_000;
  }
  // The next minute: the key's cell counts in it, and the minute before keeps what it counted.
  t = Date.parse('2026-03-01T10:01:05Z');
  recorder.record('acc-1', 'key-1', 'mainnet', 'eth_call', 0, 2, 1, holder);
  await recorder.flush();
  const rows = await store.usage.listUsageMinutes({ from: '2026-03-01T10:00', to: '2026-03-01T10:02' });
  assert.deepEqual(rows.filter((r) => r.accountId === 'acc-1').map((r) => [r.minute, r.method, r.keyId, r.requests, r.computeUnits]).sort(), [
    ['2026-03-01T10:00', 'eth_blockNumber', 'key-1', 4, 8],
    ['2026-03-01T10:00', 'eth_call', 'key-1', 8, 16],
    ['2026-03-01T10:00', 'eth_getLogs', 'key-1', 4, 8],
    ['2026-03-01T10:01', 'eth_call', 'key-1', 1, 2],
  ]);
  assert.equal(recorder.rowsWritten, 13, 'each flush writes what its cells counted since the one before');
  assert.deepEqual(recorder.totalsNow().map((x) => x.requests).sort(), [4, 4, 9]);
  await recorder.close();
  await store.close();
});

test('cells of minutes gone are made again for later minutes, and every minute counts its own calls, late ones included', async () => {
  const store = sqliteStores(':memory:');
  // Each minute a different set of keys and methods (a minute's cells go at the first flush after it, and the next
  // minute's are made anew), and in the third a call late to the second, after the clock moved on (its cells are
  // still there until the next flush).
  const calls: Array<{ at: string; minute: number; key: number; method: string }> = [];
  for (let minute = 0; minute < 4; minute++) {
    for (let i = 0; i < 40; i++) calls.push({ at: `2026-03-01T10:0${minute}:10Z`, minute, key: (i * (minute + 1)) % 30, method: ['eth_call', 'eth_getLogs', 'eth_chainId'][(i + minute) % 3] });
    if (minute === 2) calls.push({ at: '2026-03-01T10:01:59Z', minute: 1, key: 7, method: 'eth_call' }, { at: '2026-03-01T10:02:30Z', minute: 2, key: 7, method: 'eth_call' });
  }
  // Exactly the cells and keys each account needs in a minute: a cell made twice pushes a call under (other).
  const need = (id: (c: (typeof calls)[number]) => string) => {
    const sets = new Map<string, Set<string>>();
    for (const c of calls) {
      const at = `${c.minute} ${c.key % 3}`;
      if (!sets.has(at)) sets.set(at, new Set());
      sets.get(at)!.add(id(c));
    }
    return Math.max(10, ...[...sets.values()].map((x) => x.size));
  };
  let t = 0;
  const recorder = new UsageRecorder(store.usage, 60_000, need((c) => `${c.key} ${c.method}`), need((c) => String(c.key)), pino({ level: 'silent' }), () => t);
  const holders = Array.from({ length: 30 }, () => ({ usageEpoch: -1, usageCells: undefined, usageCell: undefined, usageAccount: undefined }));
  const expected = new Map<string, number>();
  for (const [i, c] of calls.entries()) {
    t = Date.parse(c.at);
    recorder.record(`acc-${c.key % 3}`, `key-${c.key}`, 'mainnet', c.method, 0, 1, 1, holders[c.key]);
    const id = `2026-03-01T10:0${c.minute} key-${c.key} ${c.method}`;
    expected.set(id, (expected.get(id) ?? 0) + 1);
    // Flushes within each minute too: a minute's cells stay through its flushes, however many keys come and go.
    if (i % 10 === 9) await recorder.flush();
  }
  await recorder.flush();
  const rows = await store.usage.listUsageMinutes({ from: '2026-03-01T10:00', to: '2026-03-01T10:04' });
  const got = new Map<string, number>();
  for (const r of rows.filter((x) => x.accountId.startsWith('acc-'))) {
    const id = `${r.minute} ${r.keyId} ${r.method}`;
    got.set(id, (got.get(id) ?? 0) + r.requests);
  }
  assert.deepEqual(new Map([...got].sort()), new Map([...expected].sort()));
  await recorder.close();
  await store.close();
});

test("a key's cell moves on to the next minute before any flush: each minute keeps what it counted, /metrics counts each call once, and an account's bounds count again each minute", async () => {
  const store = sqliteStores(':memory:');
  let t = Date.parse('2026-03-01T10:00:50Z');
  // One key a minute per account: a second key's calls in a minute go under (other).
  const recorder = new UsageRecorder(store.usage, 60_000, 10, 1, pino({ level: 'silent' }), () => t);
  const holder = () => ({ usageEpoch: -1, usageCells: undefined, usageCell: undefined, usageAccount: undefined });
  const [k1, k2, k3] = [holder(), holder(), holder()];
  for (let i = 0; i < 3; i++) recorder.record('acc-1', 'key-1', 'mainnet', 'eth_call', 0, 2, 1, k1);
  t = Date.parse('2026-03-01T10:01:10Z');
  for (let i = 0; i < 2; i++) recorder.record('acc-1', 'key-1', 'mainnet', 'eth_call', 0, 2, 1, k1);
  recorder.record('acc-1', 'key-2', 'mainnet', 'eth_call', 0, 2, 1, k2);
  assert.deepEqual(recorder.totalsNow().map((x) => x.requests), [6], 'each call once, before the flush');
  t = Date.parse('2026-03-01T10:02:10Z');
  recorder.record('acc-1', 'key-2', 'mainnet', 'eth_call', 0, 2, 1, k2);
  recorder.record('acc-1', 'key-3', 'mainnet', 'eth_call', 0, 2, 1, k3);
  await recorder.flush();
  const rows = await store.usage.listUsageMinutes({ from: '2026-03-01T10:00', to: '2026-03-01T10:03' });
  assert.deepEqual(rows.filter((r) => r.accountId === 'acc-1').map((r) => [r.minute, r.keyId, r.method, r.requests]).sort(), [
    ['2026-03-01T10:00', 'key-1', 'eth_call', 3],
    ['2026-03-01T10:01', 'key-1', 'eth_call', 2],
    ['2026-03-01T10:01', '(other):acc-1', 'eth_call', 1],
    ['2026-03-01T10:02', 'key-2', 'eth_call', 1],
    ['2026-03-01T10:02', '(other):acc-1', 'eth_call', 1],
  ].sort());
  assert.deepEqual(recorder.totalsNow().map((x) => x.requests), [8]);
  await recorder.close();
  await store.close();
});
