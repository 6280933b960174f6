import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sqliteStores } from '../store/open-store.ts';
import type { UsageMinute } from '../store/usage/usage-store.ts';
import { readUsageRows, TooManyUsageRowsError, UsageReadGate } from './read-usage.ts';

const dir = mkdtempSync(join(tmpdir(), 'ng-read-usage-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const row = (m: number, keyId: string): UsageMinute => ({
  minute: `2026-03-01T10:${String(m).padStart(2, '0')}`, accountId: 'acc-1', keyId, network: 'mainnet', method: 'eth_call', code: 0,
  requests: 1, computeUnits: 26, latencyMsSum: 3, latency: [1, 0, 0, 0, 0, 0],
});

test('a range of maxRows rows is answered whole; one row more is refused before any row is read', async () => {
  const store = sqliteStores(join(dir, 'usage.db'));
  const rows: UsageMinute[] = [];
  for (let m = 0; m < 10; m++) for (let k = 0; k < 100; k++) rows.push(row(m, `key-${k}`));
  await store.usage.addUsageMinutes(rows);
  // Pages read, seen from the store: a refusal that read its way to the limit cost a page per 500 rows.
  let pages = 0;
  const list = store.usage.listUsageMinutes.bind(store.usage);
  store.usage.listUsageMinutes = (q) => { pages++; return list(q); };
  const q = { from: '2026-03-01T10:00', to: '2026-03-01T11:00', accountId: 'acc-1' };
  const opts = () => ({ maxRows: 1000, gate: new UsageReadGate(), deadline: performance.now() + 30_000 });

  let requests = 0;
  await readUsageRows(store.usage, q, opts(), (r) => { requests += r.requests; });
  assert.equal(requests, 1000, 'exactly maxRows rows: answered, every row counted');
  assert.equal(pages, 3, 'read in pages of 500 (the last one short)');

  pages = 0;
  await store.usage.addUsageMinutes([row(10, 'key-0')]);
  await assert.rejects(readUsageRows(store.usage, q, opts(), () => {}), (err) => err instanceof TooManyUsageRowsError && /more than 1000 usage rows/.test(err.message));
  assert.equal(pages, 0, 'refused by the count alone');
  await store.close();
});
