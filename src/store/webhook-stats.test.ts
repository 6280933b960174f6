/**
 * The outbox in numbers at scale (every /metrics scrape and /analytics/webhooks counted every tenant's
 * events, 2.6 s at 2 million). On SQLite and PostgreSQL: the counters are filled from the events already there when
 * the migration runs, and a read of every tenant's numbers costs the same with 2,000 events as with 500,000, because
 * its plan reads no event but each webhook's oldest waiting one, by index. The suite writes 10,000 events after the
 * first 2,000 and checks the numbers and the plans (which show the read does not grow, at any size, without timing
 * it); `npm run soak -- outbox-numbers` writes 500,000 and also holds the timings to it (test/helpers/soak.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { freshDatabase, postgresSkipReason } from '../../test/helpers/postgres.ts';
import { SOAK, sized } from '../../test/helpers/soak.ts';
import { postgresStores, sqliteStores } from './open-store.ts';
import { migrationsOf } from './migrations/index.ts';
import { SqlDb } from './sql/sql-db.ts';
import { freePlan, newAccount } from './store.contract.ts';
import type { Stores } from './stores.ts';
import type { WebhookStats } from './webhooks/webhook-event-store.ts';
import { webhookStatsQuery } from './webhooks/webhook-stats.ts';

// Asked before any suite is registered: a suite registered after a top-level await may never run.
const skip = await postgresSkipReason('webhook outbox numbers on PostgreSQL');
const dir = mkdtempSync(join(tmpdir(), 'ng-wstats-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const TENANTS = 100;
const HOOKS_PER_TENANT = 2;
const BIG = sized(10_000, 500_000);
const SMALL = 2_000;

/** Event i of a bulk insert: webhook `wh<i mod 200>`, one in seven waiting (of every webhook), the others delivered a day after written. */
const shape = { waiting: (i: number) => i % 7 === 0 };
const DAY_MS = 86_400_000;
function expectedTotals(from: number, to: number): { events: number; pending: number } {
  let pending = 0;
  for (let i = from; i < to; i++) if (shape.waiting(i)) pending++;
  return { events: to - from, pending };
}

/** Tenants and their webhooks, through the store. */
async function tenants(store: Stores): Promise<string[]> {
  await store.plans.createPlan(freePlan);
  const accounts: string[] = [];
  for (let t = 0; t < TENANTS; t++) {
    const acct = (await store.accounts.createAccount(newAccount())).id;
    accounts.push(acct);
    for (let h = 0; h < HOOKS_PER_TENANT; h++) {
      await store.webhooks.createWebhook({ id: `wh${t + TENANTS * h}`, accountId: acct, network: 'mainnet', kind: 'block.mined', url: 'https://example.com/h', options: {}, secret: 's', status: 'active' });
    }
  }
  return accounts;
}

const SQLITE_BULK = `WITH RECURSIVE n(i) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
  INSERT INTO webhook_events (id, webhook_id, seq, type, body, created_at, status, attempts, next_attempt_at, delivered_at)
  SELECT 'ev' || i, 'wh' || (i % ${TENANTS * HOOKS_PER_TENANT}), i + 1, 'block.mined', '{"n":' || i || '}', printf('2026-11-01T%02d:%02d:%02d.%03dZ', i / 3600000, (i / 60000) % 60, (i / 1000) % 60, i % 1000),
    CASE WHEN i % 7 = 0 THEN 'pending' ELSE 'delivered' END, CASE WHEN i % 7 = 0 THEN 0 ELSE 1 END,
    printf('2026-11-01T%02d:%02d:%02d.%03dZ', i / 3600000, (i / 60000) % 60, (i / 1000) % 60, i % 1000),
    CASE WHEN i % 7 = 0 THEN NULL ELSE printf('2026-11-02T%02d:%02d:%02d.%03dZ', i / 3600000, (i / 60000) % 60, (i / 1000) % 60, i % 1000) END
  FROM n`;

const PG_BULK = `INSERT INTO webhook_events (id, webhook_id, seq, type, body, created_at, status, attempts, next_attempt_at, delivered_at)
  SELECT 'ev' || i, 'wh' || (i % ${TENANTS * HOOKS_PER_TENANT}), i + 1, 'block.mined', '{"n":' || i || '}', t,
    CASE WHEN i % 7 = 0 THEN 'pending' ELSE 'delivered' END, CASE WHEN i % 7 = 0 THEN 0 ELSE 1 END, t,
    CASE WHEN i % 7 = 0 THEN NULL ELSE t + interval '1 day' END
  FROM generate_series($1::int, $2::int - 1) AS i, LATERAL (SELECT timestamptz '2026-11-01T00:00:00Z' + i * interval '1 ms' AS t) x`;

/** The read of everyone's numbers, or of one account's, as the store sends it to this database (its plan is read here). */
const statsQuery = (db: SqlDb, accountId?: string) => webhookStatsQuery(db.k, accountId).compile();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function timed(read: () => Promise<unknown>, n = 7): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await read();
    ms.push(performance.now() - t0);
  }
  return median(ms);
}
const sum = (stats: WebhookStats[], f: (s: WebhookStats) => number) => stats.reduce((t, s) => t + f(s), 0);

interface Backend {
  store: Stores;
  bulk(from: number, to: number): Promise<void>;
  /** The plan's lines (SQLite) or nodes (PostgreSQL) of the read of everyone's numbers. */
  plan(): Promise<string[]>;
  close(): Promise<void>;
}

async function scales(name: string, b: Backend, accounts: string[]): Promise<void> {
  await b.bulk(0, SMALL);
  const small = { all: await timed(() => b.store.webhookEvents.webhookStats()), one: await timed(() => b.store.webhookEvents.webhookStats(accounts[7])) };
  const t0 = performance.now();
  await b.bulk(SMALL, SMALL + BIG);
  const insertMs = performance.now() - t0;
  const big = { all: await timed(() => b.store.webhookEvents.webhookStats()), one: await timed(() => b.store.webhookEvents.webhookStats(accounts[7])) };
  const stats = await b.store.webhookEvents.webhookStats();
  const want = expectedTotals(0, SMALL + BIG);
  console.log(`${name} outbox numbers: ${SMALL} events: all tenants ${small.all.toFixed(1)} ms, one ${small.one.toFixed(1)} ms; ` +
    `${SMALL + BIG} events (${BIG} written in one transaction in ${Math.round(insertMs)} ms): all tenants ${big.all.toFixed(1)} ms, one ${big.one.toFixed(1)} ms`);
  assert.equal(stats.length, TENANTS * HOOKS_PER_TENANT);
  assert.equal(sum(stats, (s) => s.events), want.events);
  assert.equal(sum(stats, (s) => s.pending), want.pending);
  assert.equal(stats.find((s) => s.webhookId === 'wh0')!.oldestPendingAt, '2026-11-01T00:00:00.000Z');
  assert.deepEqual(new Set(stats.map((s) => s.meanDeliveryMs)), new Set([DAY_MS]), 'mean delivery time from the counters');
  assert.equal(sum(stats, (s) => s.attempts), want.events - want.pending);
  // The read does not grow with the outbox (the scan it replaced took ~100x longer at 250x the events). Timed only at
  // the soak's size: a unit test times nothing, and at the suite's the plans below say it.
  if (SOAK) assert.ok(big.all <= small.all * 5 + 50, `everyone's numbers: ${big.all.toFixed(1)} ms at ${SMALL + BIG} events against ${small.all.toFixed(1)} ms at ${SMALL}`);
  if (SOAK) assert.ok(big.one <= small.one * 5 + 50, `one account's numbers: ${big.one.toFixed(1)} ms against ${small.one.toFixed(1)} ms`);
  const plan = await b.plan();
  console.log(`${name} plan of everyone's numbers:\n  ${plan.join('\n  ')}`);
  return void plan;
}

describe('webhook outbox numbers at scale, SQLite', { timeout: 240_000 }, () => {
  test('the migration fills the counters from events already there', async () => {
    const file = join(dir, 'backfill.db');
    const db = new Database(file);
    db.pragma('foreign_keys = ON');
    for (const m of migrationsOf('sqlite').slice(0, 9)) db.exec(m);
    db.pragma('user_version = 9');
    db.close();
    // Rows written as the version before wrote them: through SQL on the 9-migration schema.
    const seed = new Database(file);
    seed.exec(`INSERT INTO plans (id, name, cu_per_second, cu_per_month, max_batch_size, debug_methods, max_filters, created_at, updated_at) VALUES ('free', 'Free', 1, 1, 1, 0, 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
      INSERT INTO accounts (id, name, email, email_normalized, status, role, plan_id, created_at, updated_at) VALUES ('a', 'A', 'a@x', 'a@x', 'active', 'member', 'free', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
      INSERT INTO webhooks (id, account_id, network, kind, url, options, secret, status, created_at, updated_at) VALUES ('w', 'a', 'mainnet', 'block.mined', 'https://example.com', '{}', 's', 'active', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
      INSERT INTO webhook_events (id, webhook_id, seq, type, body, created_at, status, attempts, next_attempt_at, delivered_at) VALUES
        ('e1', 'w', 1, 'block.mined', '{}', '2026-01-01T00:00:01.000Z', 'delivered', 3, '2026-01-01T00:00:01.000Z', '2026-01-01T00:00:03.000Z'),
        ('e2', 'w', 2, 'block.mined', '{}', '2026-01-01T00:00:02.000Z', 'delivered', 1, '2026-01-01T00:00:02.000Z', '2026-01-01T00:00:03.000Z'),
        ('e3', 'w', 3, 'block.mined', '{}', '2026-01-01T00:00:04.000Z', 'pending', 2, '2026-01-01T00:00:09.000Z', NULL);`);
    seed.close();
    const store = sqliteStores(file);
    try {
      assert.deepEqual(await store.webhookEvents.webhookStats(), [{ webhookId: 'w', events: 3, delivered: 2, pending: 1, attempts: 6, failedAttempts: 4, oldestPendingAt: '2026-01-01T00:00:04.000Z', meanDeliveryMs: 1500 }]);
    } finally {
      await store.close();
    }
  });

  test(`every tenant's numbers at ${SMALL + BIG} events are right and read by index, with no scan of the events${SOAK ? ', as fast as at ' + SMALL : ''}`, async () => {
    const file = join(dir, 'scale.db');
    const store = sqliteStores(file);
    const bulkDb = new Database(file);
    const bulk = bulkDb.prepare(SQLITE_BULK);
    // Only compiles: the store's query, with its parameters, for EXPLAIN on the same file.
    const sqlDb = SqlDb.sqlite(bulkDb);
    const planOf = (accountId?: string) => {
      const q = statsQuery(sqlDb, accountId);
      return (bulkDb.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.parameters) as { detail: string }[]).map((r) => r.detail);
    };
    try {
      const accounts = await tenants(store);
      await scales('sqlite', {
        store,
        bulk: async (from, to) => void bulk.run(from, to),
        plan: async () => planOf(),
        close: async () => {},
      }, accounts);
      const plan = planOf('x');
      const all = planOf();
      for (const lines of [all, plan]) {
        assert.ok(!lines.some((l) => /^SCAN e\b/.test(l)), `no scan of webhook_events: ${lines.join(' | ')}`);
        assert.ok(lines.some((l) => /^SEARCH e USING (COVERING )?INDEX webhook_events_waiting/.test(l)), `the oldest waiting event by index: ${lines.join(' | ')}`);
      }
      assert.ok(plan.some((l) => /^SEARCH w USING (COVERING )?INDEX webhooks_account/.test(l)), `one account's webhooks by index: ${plan.join(' | ')}`);
    } finally {
      bulkDb.close();
      await store.close();
    }
  });
});

describe('webhook outbox numbers at scale, PostgreSQL', { skip, timeout: 300_000 }, () => {
  test('the migration fills the counters from events already there', async () => {
    const url = await freshDatabase();
    const client = new pg.Client(url);
    await client.connect();
    try {
      await client.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
      for (const [i, m] of migrationsOf('postgres').slice(0, 8).entries()) {
        await client.query(m);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [i + 1]);
      }
      await client.query(`INSERT INTO plans (id, name, cu_per_second, cu_per_month, max_batch_size, debug_methods, max_filters, created_at, updated_at) VALUES ('free', 'Free', 1, 1, 1, false, 1, now(), now());
        INSERT INTO accounts (id, name, email, email_normalized, status, role, plan_id, created_at, updated_at) VALUES ('a', 'A', 'a@x', 'a@x', 'active', 'member', 'free', now(), now());
        INSERT INTO webhooks (id, account_id, network, kind, url, options, secret, status, created_at, updated_at) VALUES ('w', 'a', 'mainnet', 'block.mined', 'https://example.com', '{}', 's', 'active', now(), now());
        INSERT INTO webhook_events (id, webhook_id, seq, type, body, created_at, status, attempts, next_attempt_at, delivered_at) VALUES
          ('e1', 'w', 1, 'block.mined', '{}', '2026-01-01T00:00:01.000Z', 'delivered', 3, '2026-01-01T00:00:01.000Z', '2026-01-01T00:00:03.000Z'),
          ('e2', 'w', 2, 'block.mined', '{}', '2026-01-01T00:00:02.000Z', 'delivered', 1, '2026-01-01T00:00:02.000Z', '2026-01-01T00:00:03.000Z'),
          ('e3', 'w', 3, 'block.mined', '{}', '2026-01-01T00:00:04.000Z', 'pending', 2, '2026-01-01T00:00:09.000Z', NULL);`);
    } finally {
      await client.end();
    }
    const store = await postgresStores(url);
    try {
      assert.deepEqual(await store.webhookEvents.webhookStats(), [{ webhookId: 'w', events: 3, delivered: 2, pending: 1, attempts: 6, failedAttempts: 4, oldestPendingAt: '2026-01-01T00:00:04.000Z', meanDeliveryMs: 1500 }]);
    } finally {
      await store.close();
    }
  });

  test(`every tenant's numbers at ${SMALL + BIG} events are right and read from the counters and by index${SOAK ? ', as fast as at ' + SMALL : ''}`, async () => {
    const url = await freshDatabase();
    const store = await postgresStores(url);
    const client = new pg.Client(url);
    await client.connect();
    // Only compiles (its pool never connects): the store's query, with its parameters, for EXPLAIN.
    const pool = new pg.Pool({ connectionString: url });
    const sqlDb = SqlDb.postgres(pool);
    try {
      const accounts = await tenants(store);
      const planOf = async (accountId?: string) => {
        const q = statsQuery(sqlDb, accountId);
        const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${q.sql}`, [...q.parameters]);
        const nodes: { type: string; relation?: string; index?: string }[] = [];
        const walk = (n: any) => {
          nodes.push({ type: n['Node Type'], relation: n['Relation Name'], index: n['Index Name'] });
          for (const c of n.Plans ?? []) walk(c);
        };
        walk(rows[0]['QUERY PLAN'][0].Plan);
        return nodes;
      };
      const show = (nodes: Awaited<ReturnType<typeof planOf>>) => nodes.map((n) => `${n.type}${n.relation ? ` on ${n.relation}` : ''}${n.index ? ` using ${n.index}` : ''}`);
      await scales('postgres', {
        store,
        bulk: async (from, to) => {
          await client.query(PG_BULK, [from, to]);
          await client.query('ANALYZE webhook_events');
        },
        plan: async () => show(await planOf()),
        close: async () => {},
      }, accounts);
      for (const nodes of [await planOf(), await planOf(accounts[3])]) {
        assert.ok(!nodes.some((n) => n.relation === 'webhook_events' && /Seq Scan|Bitmap Heap Scan/.test(n.type)), `no scan of webhook_events: ${show(nodes).join(' | ')}`);
        assert.ok(nodes.some((n) => n.relation === 'webhook_events' && n.index === 'webhook_events_waiting'), `the oldest waiting event by index: ${show(nodes).join(' | ')}`);
        assert.ok(nodes.some((n) => n.relation === 'webhook_counters'), `read from the counters: ${show(nodes).join(' | ')}`);
      }
    } finally {
      await pool.end();
      await client.end();
      await store.close();
    }
  });
});
