import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { newKeyMaterial } from '../auth/key-value.ts';
import { freshDatabase, postgresReachable, postgresWhere } from '../../test/helpers/postgres.ts';
import { openStore } from './open-store.ts';
import { postgresStores } from './open-store.ts';
import type { Stores } from './stores.ts';
import { MIGRATIONS, migrationsOf } from './migrations/index.ts';
import { KEY_CHANGE_CHANNEL } from './migrations/23-key-change-signal.ts';
import { eventually } from '../../test/helpers/eventually.ts';
import { freePlan, newAccount, newKey, storeContract } from './store.contract.ts';
import { findKeyByHash } from './keys/key-store.ts';

const where = postgresWhere;
const reachable = postgresReachable;

/** SQL on the test database, beside the store (to look at rows as they are kept, and to empty tables). */
async function sql(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

let contractDb: Promise<string> | undefined;
/** The contract's stores share one database per run, emptied before each test (a database per test is slow). */
const sharedUrl = () => (contractDb ??= freshDatabase());
async function emptyStore(): Promise<Stores> {
  const url = await sharedUrl();
  const store = await postgresStores(url);
  // DELETE, children first: on these few rows ~2 ms, where TRUNCATE (new files for every table) took ~300 ms a test.
  const tables = ['usage', 'usage_minutes', 'usage_hours', 'usage_days', 'request_log', 'sessions', 'account_tokens', 'members', 'mail_outbox', 'webhook_events', 'webhook_counters', 'webhooks', 'api_keys', 'accounts', 'plans', 'meta'];
  await sql(url, `BEGIN; ${tables.map((t) => `DELETE FROM ${t};`).join(' ')} COMMIT`);
  return store;
}

const up = await reachable();
if (!up && process.env.CI) {
  test(`PostgreSQL is reachable at ${where} (required when CI is set)`, () => {
    assert.fail(`PostgreSQL not reachable at ${where}: the postgres store suite cannot run, and CI requires it`);
  });
} else {
  const skip = up ? undefined : `PostgreSQL not reachable at ${where}`;
  if (skip) console.warn(`postgres store suite skipped: ${skip} (set CI to make this a failure)`);
  storeContract('postgres', emptyStore, { skip, sameDatabase: async () => postgresStores(await sharedUrl()) });

  describe('postgres store, specifically', { skip }, () => {
    test('several instances starting at once apply each migration exactly once', async () => {
      const url = await freshDatabase();
      const stores = await Promise.all(Array.from({ length: 6 }, () => postgresStores(url)));
      const { rows } = await sql(url, 'SELECT version FROM schema_migrations ORDER BY version');
      assert.deepEqual(rows.map((r) => r.version), migrationsOf('postgres').map((_, i) => i + 1));
      await stores[0].plans.createPlan(freePlan);
      assert.equal((await stores[5].plans.getPlan('free'))!.id, 'free');
      await Promise.all(stores.map((s) => s.close()));
    });

    test('keeps everything across a restart, without migrating again', async () => {
      const url = await sharedUrl();
      const first = await emptyStore();
      await first.plans.createPlan(freePlan);
      await first.close();
      const second = await postgresStores(url);
      assert.equal((await second.plans.getPlan('free'))!.name, 'Free');
      await second.close();
    });

    test('refuses a database written by a newer Nodegate', async () => {
      const url = await freshDatabase();
      await (await postgresStores(url)).close();
      await sql(url, 'INSERT INTO schema_migrations (version) VALUES ($1)', [migrationsOf('postgres').length + 1]);
      await assert.rejects(postgresStores(url), /newer than this Nodegate knows/);
    });

    test('text is in byte order on a database of a language\'s collation: each column, rows of before the step kept, a search by prefix a range of its index', async () => {
      // ICU's en-US, as a database made on a host whose locale is en_US.UTF-8 sorts: 'a' < 'B', where bytes put 'B' first.
      const url = await freshDatabase("TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'");
      const textColumns = `SELECT table_name || '.' || column_name AS c, collation_name AS coll FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type = 'text' ORDER BY 1`;
      const first = await postgresStores(url);
      await first.plans.createPlan(freePlan);
      const account = await first.accounts.createAccount(newAccount());
      const key = newKey(account.id);
      await first.keys.insertKey(key);
      const minute = { minute: '2026-03-01T10:00', accountId: account.id, keyId: key.id, network: 'mainnet', method: 'eth_call', code: 0, requests: 2, computeUnits: 52, latencyMsSum: 9, latency: [1, 1, 0, 0, 0, 0] };
      await first.usage.addUsageMinutes([minute]);
      await first.close();
      // PostgreSQL's version of the step before it: the steps PostgreSQL has, counted up to it.
      const before = MIGRATIONS.filter((m) => m.postgres !== undefined).findIndex((m) => m.name === 'byte-order-text');
      assert.ok(before > 0, 'the step is in the list');
      const { rows: columns } = await sql(url, textColumns);
      assert.ok(columns.length > 50, 'the text columns are read');
      assert.deepEqual(columns.filter((r) => r.coll !== 'C'), [], 'a fresh store has every text column in byte order: a new one is `text COLLATE "C"` on PostgreSQL (migrations/24-byte-order-text.ts)');
      // The database as the step before found it: every text column in the database's collation, its rows in.
      const undo = columns.map((r) => { const [t, c] = (r.c as string).split('.'); return `ALTER TABLE ${t} ALTER COLUMN ${c} TYPE text COLLATE "default";`; });
      await sql(url, `BEGIN; ${undo.join(' ')} DELETE FROM schema_migrations WHERE version > ${before}; COMMIT`);
      assert.ok((await sql(url, textColumns)).rows.every((r) => r.coll === null), 'undone: the database\'s own collation');

      const again = await postgresStores(url);
      try {
        assert.deepEqual((await sql(url, textColumns)).rows.filter((r) => r.coll !== 'C'), [], 'every text column in byte order');
        const { rows: stats } = await sql(url, "SELECT attname FROM pg_stats WHERE schemaname = 'public' AND tablename = 'api_keys' AND attname IN ('id', 'hash') ORDER BY 1");
        assert.deepEqual(stats.map((r) => r.attname), ['hash', 'id'], 'analyzed again: a column altered loses its statistics');
        assert.equal((await findKeyByHash(again.keys, key.hash))?.key.id, key.id);
        assert.deepEqual((await again.keys.findKeysByPrefix(key.prefix, account.id, 10)).map((k) => k.id), [key.id]);
        assert.deepEqual((await again.usage.listUsageMinutes({ from: '2026-03-01T10:00', to: '2026-03-01T10:01', accountId: account.id })).map((r) => [r.keyId, r.requests]), [[key.id, 2]]);
        // A search of a million keys by prefix reads the keys with that prefix, not the whole index (the plan with
        // sequential scans off, so that the planner shows what the index allows on a handful of rows).
        const { rows: plan } = await sql(url, "SET enable_seqscan = off; EXPLAIN SELECT id FROM api_keys WHERE prefix LIKE 'ngk\\_ab%' ESCAPE '\\'")
          .then((r) => (r as unknown as pg.QueryResult[])[1]);
        const text = plan.map((r) => r['QUERY PLAN'] as string).join('\n');
        assert.match(text, /Index Cond: \(\(prefix >= 'ngk_ab'::text\) AND \(prefix < 'ngk_ac'::text\)\)/, text);
        const { rows: order } = await sql(url, "SELECT string_agg(id, ' ' ORDER BY id) AS ids FROM (VALUES ('b'), ('B'), ('a')) AS v (id)");
        assert.equal(order[0].ids, 'a b B', 'the database itself still sorts as its language does (the test would not tell otherwise)');
      } finally {
        await again.close();
      }
    });

    test("a key's value never reaches the database: only its hash", async () => {
      const store = await emptyStore();
      await store.plans.createPlan(freePlan);
      const account = await store.accounts.createAccount(newAccount());
      const { value, key } = newKeyMaterial('secret');
      await store.keys.insertKey(newKey(account.id, key));
      await store.keys.touchKeys(new Map([[key.id, new Date().toISOString()]]));
      await store.close();
      const url = await sharedUrl();
      const { rows } = await sql(url, `SELECT t::text AS row FROM api_keys t UNION ALL SELECT t::text FROM accounts t
        UNION ALL SELECT t::text FROM plans t UNION ALL SELECT t::text FROM meta t`);
      const text = rows.map((r) => r.row as string).join('\n');
      assert.ok(text.includes(key.hash), 'the hash is there (the search sees the records)');
      assert.ok(!text.includes(value), 'the value is not');
      assert.ok(!text.includes(value.slice(key.prefix.length)), 'nor the part of it beyond the listed prefix');
    });

    test('a change a resolution reads is announced as it commits, by any writer; a last use is not', async () => {
      const url = await freshDatabase();
      const writer = await postgresStores(url);
      await writer.plans.createPlan(freePlan);
      const account = await writer.accounts.createAccount(newAccount());
      const { key } = newKeyMaterial('secret');
      await writer.keys.insertKey(newKey(account.id, key));
      // The channel as any client hears it: notifications come in commit order, so a mark sent after a write comes
      // after whatever that write announced.
      const ear = new pg.Client(url);
      await ear.connect();
      const heard: string[] = [];
      let told: (() => void) | undefined;
      ear.on('notification', (n) => { heard.push(n.payload ?? ''); told?.(); });
      await ear.query(`LISTEN ${KEY_CHANGE_CHANNEL}`);
      const next = () => new Promise<void>((r) => { told = r; });
      const mark = async (name: string) => {
        const h = next();
        await sql(url, `SELECT pg_notify($1, $2)`, [KEY_CHANGE_CHANNEL, name]);
        await h;
      };
      try {
        await writer.keys.touchKeys(new Map([[key.id, new Date().toISOString()]]));
        await mark('after the last use');
        assert.deepEqual(heard, ['after the last use'], 'a last use is no change');
        // Each change once, a revocation with its key's id (refused on the word alone).
        for (const [what, write, payload] of [
          ["key's rules", () => writer.keys.updateKey(key.id, { name: 'renamed' }), ''],
          ['revocation', () => writer.keys.revokeKey(key.id), `revoked ${key.id}`],
          ['account', () => writer.accounts.updateAccount(account.id, { name: 'Renamed' }), ''],
          ['plan', () => writer.plans.updatePlan('free', { cuPerSecond: 331 }), ''],
        ] as const) {
          heard.length = 0;
          await write();
          await mark(`after the ${what}`);
          assert.deepEqual(heard, [payload, `after the ${what}`], `the ${what} is announced`);
        }
      } finally {
        await ear.end();
        await writer.close();
      }
    });

    test("a store's signals: heard from another writer, and again after their connection is cut", async () => {
      const url = await freshDatabase();
      const writer = await postgresStores(url);
      const follower = await postgresStores(url);
      await writer.plans.createPlan(freePlan);
      const account = await writer.accounts.createAccount(newAccount());
      const keys = [newKeyMaterial('secret').key, newKeyMaterial('secret').key];
      for (const key of keys) await writer.keys.insertKey(newKey(account.id, key));
      const signals = follower.keys.signals!;
      let calls = 0;
      const revoked: Array<string | undefined> = [];
      const stop = signals.listen((id) => { calls++; revoked.push(id); });
      try {
        await eventually(() => signals.stats.joined === 1 && calls === 1, 10_000, 'the channel joined (a signal)');
        await writer.keys.revokeKey(keys[0].id);
        await eventually(() => signals.stats.heard === 1 && calls === 2, 10_000, 'the revocation heard');
        // The listening connection cut by the server, as a restart or a fault cuts it: joined again, which is a signal.
        await sql(url, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = $1`, [`LISTEN ${KEY_CHANGE_CHANNEL}`]);
        await eventually(() => signals.stats.joined === 2 && calls === 3, 10_000, 'the channel joined again');
        await writer.keys.revokeKey(keys[1].id);
        await eventually(() => signals.stats.heard === 2 && calls === 4, 10_000, 'a revocation heard on the new connection');
        assert.deepEqual(revoked, [undefined, keys[0].id, undefined, keys[1].id], 'each join, then each revocation with its key');
      } finally {
        stop();
        await follower.close();
        await writer.close();
      }
    });

    test('openStore opens PostgreSQL when a database URL is set', async () => {
      const store = await openStore({ dataDir: '/nonexistent', database: { url: await sharedUrl() } });
      assert.equal(store.kind, 'postgres');
      await store.ping();
      await store.close();
    });
  });
}
