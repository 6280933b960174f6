// Runs alone (scripts/run-tests.mjs): scrape and call times at a large outbox against a small one (5x).
/**
 * The outbox in numbers through the wire at scale (a /metrics scrape or an /analytics/webhooks call that counts
 * every tenant's events takes 2.6 s at 2 million). A gateway on its SQLite store; 100 tenants with 2 webhooks each;
 * 2,000 events, then more written in one transaction beside the running gateway: 10,000 in the suite, 500,000 under
 * `npm run soak -- webhooks-stats-scale` (test/helpers/soak.ts). A scrape and an analytics call take about as long
 * after as before, and show the same numbers a count of the events gives. That the reads do not grow with the outbox
 * at any size is shown by their plans (src/store/webhook-stats.test.ts: by index, no scan of the events).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { sized } from '../helpers/soak.ts';

const TENANTS = 100;
const HOOKS = 2 * TENANTS;
const SMALL = 2_000;
const BIG = sized(10_000, 500_000);

// Event i: webhook wh<i mod 200>, one in seven waiting (of every webhook), the others delivered a day after written.
const BULK = `WITH RECURSIVE n(i) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
  INSERT INTO webhook_events (id, webhook_id, seq, type, body, created_at, status, attempts, next_attempt_at, delivered_at)
  SELECT 'ev' || i, 'wh' || (i % ${HOOKS}), i + 1, 'block.mined', '{"n":' || i || '}', printf('2026-11-01T%02d:%02d:%02d.%03dZ', i / 3600000, (i / 60000) % 60, (i / 1000) % 60, i % 1000),
    CASE WHEN i % 7 = 0 THEN 'pending' ELSE 'delivered' END, CASE WHEN i % 7 = 0 THEN 0 ELSE 1 END,
    printf('2026-11-01T%02d:%02d:%02d.%03dZ', i / 3600000, (i / 60000) % 60, (i / 1000) % 60, i % 1000),
    CASE WHEN i % 7 = 0 THEN NULL ELSE printf('2026-11-02T%02d:%02d:%02d.%03dZ', i / 3600000, (i / 60000) % 60, (i / 1000) % 60, i % 1000) END
  FROM n`;
const waitingOf = (to: number, hook?: number) => {
  let n = 0;
  for (let i = 0; i < to; i++) if (i % 7 === 0 && (hook === undefined || i % HOOKS === hook)) n++;
  return n;
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe('webhook outbox numbers at scale, through the wire', { timeout: 240_000 }, () => {
  let g: TestGateway;
  let db: Database.Database;
  before(async () => {
    // Paused webhooks: this gateway's deliverer leaves the events as the test wrote them; no retention prune.
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } }, webhooks: { allowPrivateTargets: true, pollMs: 60_000, retentionDays: 0 } });
    const { id: demo, planId: plan } = (await g.gw.store.accounts.getAccountByEmail('demo@localhost'))!;
    for (let t = 0; t < TENANTS; t++) {
      const accountId = t === 0 ? demo : (await g.gw.store.accounts.createAccount({ id: `tenant-${t}`, name: `T${t}`, email: `t${t}@example.com`, passwordHash: null, status: 'active', role: 'member', planId: plan })).id;
      for (const id of [`wh${t}`, `wh${t + TENANTS}`]) {
        await g.gw.store.webhooks.createWebhook({ id, accountId, network: 'mainnet', kind: 'block.mined', url: 'http://127.0.0.1:9/hook', options: {}, secret: 's', status: 'paused' });
      }
    }
    db = new Database(join(g.dataDir, 'nodegate.db'));
    db.pragma('busy_timeout = 5000');
  });
  after(async () => {
    db?.close();
    await g?.close();
  });

  const scrape = async () => {
    const t0 = performance.now();
    const res = await fetch(`${g.url}/metrics`);
    const text = await res.text();
    return { ms: performance.now() - t0, status: res.status, backlog: Number(/\nnodegate_webhook_backlog_events (\d+)/.exec(text)?.[1]), oldest: Number(/\nnodegate_webhook_backlog_oldest_seconds ([\d.e+]+)/.exec(text)?.[1]) };
  };
  const analytics = async () => {
    const t0 = performance.now();
    const res = await fetch(`${g.url}/api/v1/analytics/webhooks`, { headers: { authorization: `Bearer ${g.key}` } });
    const body = await res.json() as { webhooks: { webhookId: string; events: number; pending: number; delivered: number; meanDeliveryMs: number | null; oldestPendingAt: string | null }[] };
    return { ms: performance.now() - t0, status: res.status, body };
  };
  const sample = async (n = 7) => {
    const scrapes = [];
    const calls = [];
    for (let i = 0; i < n; i++) {
      scrapes.push(await scrape());
      calls.push(await analytics());
    }
    return { scrapes, calls, scrapeMs: median(scrapes.map((s) => s.ms)), callMs: median(calls.map((c) => c.ms)) };
  };

  test(`/metrics and /analytics/webhooks answer as fast with ${SMALL + BIG} events as with ${SMALL}, with the right numbers`, async () => {
    db.prepare(BULK).run(0, SMALL);
    const small = await sample();
    const t0 = performance.now();
    db.prepare(BULK).run(SMALL, SMALL + BIG);
    const insertMs = performance.now() - t0;
    const big = await sample();
    console.log(`outbox numbers through the wire: ${SMALL} events: /metrics p50 ${small.scrapeMs.toFixed(1)} ms, /analytics/webhooks p50 ${small.callMs.toFixed(1)} ms; ` +
      `${SMALL + BIG} events (${BIG} written in one transaction in ${Math.round(insertMs)} ms): /metrics p50 ${big.scrapeMs.toFixed(1)} ms, /analytics/webhooks p50 ${big.callMs.toFixed(1)} ms`);

    for (const [phase, s, total] of [['small', small, SMALL], ['big', big, SMALL + BIG]] as const) {
      assert.ok(s.scrapes.every((x) => x.status === 200 && x.backlog === waitingOf(total)), `${phase}: /metrics shows the whole backlog, ${waitingOf(total)}: ${s.scrapes.map((x) => x.backlog)}`);
      assert.ok(s.scrapes.every((x) => x.oldest > 0), `${phase}: the oldest waiting event's age`);
      const mine = s.calls.at(-1)!.body.webhooks;
      assert.deepEqual(mine.map((w) => w.webhookId).sort(), ['wh0', `wh${TENANTS}`], `${phase}: the demo account sees its own two webhooks only`);
      for (const w of mine) {
        const hook = Number(w.webhookId.slice(2));
        const events = Math.floor(total / HOOKS) + (hook < total % HOOKS ? 1 : 0);
        assert.deepEqual([w.events, w.pending, w.meanDeliveryMs], [events, waitingOf(total, hook), 86_400_000], `${phase}: ${w.webhookId} in numbers`);
      }
    }
    assert.equal(big.calls.at(-1)!.body.webhooks.find((w) => w.webhookId === 'wh0')!.oldestPendingAt, '2026-11-01T00:00:00.000Z');
    // A scan of the events takes ~1.2 s for everyone's numbers at 502,000 events on this machine (about 200x the
    // read at 2,000): a read that grows with the outbox fails here by far.
    assert.ok(big.scrapeMs <= small.scrapeMs * 5 + 100, `/metrics: ${big.scrapeMs.toFixed(1)} ms at ${SMALL + BIG} events against ${small.scrapeMs.toFixed(1)} ms at ${SMALL}`);
    assert.ok(big.callMs <= small.callMs * 5 + 100, `/analytics/webhooks: ${big.callMs.toFixed(1)} ms against ${small.callMs.toFixed(1)} ms`);
  });
});
