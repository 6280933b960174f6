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
