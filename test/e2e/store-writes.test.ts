/**
 * What the records requests leave cost the store, as /metrics counts it (`nodegate_store_rows_written_total` by kind):
 * through the wire, a key's calls over several flush rounds are usage rows, quota rows and explorer records as they
 * are written, and one last-use write for the minute, however many rounds it spans.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import parsePrometheus from 'parse-prometheus-text-format';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

type Family = { name: string; metrics: Array<{ labels?: Record<string, string>; value?: string }> };

describe('rows written to the store, on /metrics', { timeout: 60_000 }, () => {
  let g: TestGateway;
  before(async () => {
    // Every writer flushes each 100 ms: a call every 150 ms lands in a round of its own.
    g = await startTestGateway({ analytics: { flushMs: 100 }, limits: { usageFlushMs: 100 }, explorer: { flushMs: 100 }, auth: { lastUsedFlushMs: 100 } });
  });
  after(async () => { await g?.close(); });

  const written = async () => {
    const families = parsePrometheus(await (await fetch(`${g.url}/metrics`)).text()) as Family[];
    const rows = families.find((f) => f.name === 'nodegate_store_rows_written_total')?.metrics ?? [];
    return Object.fromEntries(rows.map((m) => [m.labels!.kind, Number(m.value)]));
  };

  test('a key used in five rounds: its calls written as usage, quota and explorer rows, its last use once', async () => {
    const before = await written();
    assert.deepEqual(Object.keys(before).sort(), ['explorer', 'last_use', 'quota', 'usage'], 'each writer is counted from the start');
    const CALLS = 5;
    for (let i = 0; i < CALLS; i++) {
      const r = await g.rpc({ jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] });
      assert.equal(r.status, 200);
      await sleep(150);
    }
    // Until each call's explorer record is written (the last writer to see them), then one more round of everything.
    const deadline = Date.now() + 20_000;
    let now = await written();
    while (now.explorer - before.explorer < CALLS || now.usage === before.usage || now.quota === before.quota || now.last_use === before.last_use) {
      assert.ok(Date.now() < deadline, `not all written within 20 s: ${JSON.stringify(now)}`);
      await sleep(50);
      now = await written();
    }
    await sleep(300);
    now = await written();
    assert.equal(now.explorer - before.explorer, CALLS, 'a record per call');
    assert.ok(now.usage - before.usage >= 1 && now.usage - before.usage <= CALLS, `a usage row per round with calls: ${now.usage - before.usage}`);
    assert.ok(now.quota - before.quota >= 1 && now.quota - before.quota <= CALLS, `a quota row per round with units: ${now.quota - before.quota}`);
    assert.equal(now.last_use - before.last_use, 1, 'one last-use write for the minute, not one per round');
  });
});
