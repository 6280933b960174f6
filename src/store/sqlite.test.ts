import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { newKeyMaterial } from '../auth/key-value.ts';
import { openStore } from './open-store.ts';
import { sqliteStores } from './open-store.ts';
import { MIGRATIONS, migrationsOf } from './migrations/index.ts';

const sqliteMigrations = migrationsOf('sqlite');
import { freePlan, newAccount, newKey, storeContract } from './store.contract.ts';
import { findKeyByHash } from './keys/key-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'ng-sqlite-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const freshFile = () => join(dir, `${randomUUID()}.db`);

let lastFile = '';
storeContract('sqlite', async () => sqliteStores((lastFile = freshFile())), { sameDatabase: async () => sqliteStores(lastFile) });

/** A store file as Nodegate 0.1 left it: migration 1 only, with keys that clients already hold. */
function releasedV1Store(file: string, keys: { id: string; name: string; prefix: string; hash: string }[], revoked?: string) {
  const db = new Database(file);
  db.exec(sqliteMigrations[0]);
  db.pragma('user_version = 1');
  const insert = db.prepare('INSERT INTO api_keys (id, name, prefix, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)');
  for (const k of keys) insert.run(k.id, k.name, k.prefix, k.hash, '2025-06-01T12:00:00.000Z', k.id === revoked ? '2025-06-02T00:00:00.000Z' : null);
  db.prepare("INSERT INTO meta (name, value) VALUES ('bootstrapped', '2025-06-01T12:00:00.000Z')").run();
  db.close();
}

describe('sqlite store, specifically', () => {
  test('keeps everything across a restart', async () => {
    const file = freshFile();
    const first = sqliteStores(file);
    await first.plans.createPlan(freePlan);
    const account = await first.accounts.createAccount(newAccount());
    const key = await first.keys.insertKey(newKey(account.id));
    await first.close();
    const second = sqliteStores(file);
    assert.deepEqual((await findKeyByHash(second.keys, key.hash))!.key, key);
    await second.close();
  });

  test('keys made before accounts keep working after the upgrade, on a legacy account that cannot log in', async () => {
    const file = freshFile();
    const demo = newKeyMaterial('demo').key;
    const old = newKeyMaterial('old').key;
    releasedV1Store(file, [demo, old], old.id);
    const store = sqliteStores(file);
    const ctx = (await findKeyByHash(store.keys, demo.hash))!;
    assert.deepEqual(ctx.key, {
      ...demo, accountId: 'legacy', type: 'Standard', permissions: ['rpc', 'webhooks', 'analytics'], ipAllowlist: [],
      originAllowlist: [], networkAllowlist: [], methodAllowlist: [], expiresAt: null, createdBy: null, createdAt: '2025-06-01T12:00:00.000Z',
      lastUsedAt: null, revokedAt: null, methodDenylist: [], contractAllowlist: [], userAgentAllowlist: [], logsMaxBlockRange: null,
      jwtKeys: [], jwtAudiences: [], previousPrefix: null, previousUntil: null, previousHash: null,
    });
    assert.equal(ctx.account.passwordHash, null);
    assert.equal(ctx.account.status, 'active');
    assert.equal(ctx.plan.id, 'legacy');
    assert.equal((await store.keys.getKey(old.id))!.revokedAt, '2025-06-02T00:00:00.000Z');
    assert.equal(await store.meta.getMeta('bootstrapped'), '2025-06-01T12:00:00.000Z');
    // The operator can move the account elsewhere and drop the legacy plan.
    await store.plans.createPlan(freePlan);
    await store.accounts.updateAccount('legacy', { planId: 'free' });
    assert.equal(await store.plans.deletePlan('legacy'), true);
    await store.close();
  });

  test('an upgraded store that had no keys gets no legacy account or plan', async () => {
    const file = freshFile();
    releasedV1Store(file, []);
    const store = sqliteStores(file);
    assert.deepEqual(await store.accounts.listAccounts(), []);
    assert.deepEqual(await store.plans.listPlans(), []);
    await store.close();
  });

  test('usage kept before hours were rolled up reads the same after the upgrade, and counts each call once after roll-ups', async () => {
    // The store one step before the roll-up: every flush wrote its minute, hour and day rows.
    const file = freshFile();
    const db = new Database(file);
    const rollUp = MIGRATIONS.filter((m) => m.sqlite !== undefined).findIndex((m) => m.name === 'usage-roll-up');
    for (const step of sqliteMigrations.slice(0, rollUp)) db.exec(step);
    db.pragma(`user_version = ${rollUp}`);
    const insert = (table: string, minute: string) => db.prepare(`INSERT INTO ${table} (minute, account_id, key_id, network, method, code, requests, compute_units, latency_ms_sum, l0, l1, l2, l3, l4, l5)
      VALUES (?, 'acc-1', 'key-1', 'mainnet', 'eth_call', 0, 2, 52, 4, 2, 0, 0, 0, 0, 0)
      ON CONFLICT DO UPDATE SET requests = requests + 2, compute_units = compute_units + 52, latency_ms_sum = latency_ms_sum + 4, l0 = l0 + 2`).run(minute);
    for (const minute of ['2026-03-01T10:05', '2026-03-01T23:10']) {
      insert('usage_minutes', minute);
      insert('usage_hours', `${minute.slice(0, 13)}:00`);
      insert('usage_days', `${minute.slice(0, 10)}T00:00`);
    }
    db.close();
    const store = sqliteStores(file);
    const day = { from: '2026-03-01T00:00', to: '2026-03-03T00:00', accountId: 'acc-1' };
    const requests = async (grain: 'minute' | 'hour' | 'day') => (await store.usage.listUsageMinutes({ ...day, grain })).reduce((n, r) => n + r.requests, 0);
    assert.deepEqual([await requests('minute'), await requests('hour'), await requests('day')], [4, 4, 4]);
    // A flush of an hour the old flushes wrote, and of the hour after: then every hour rolled up.
    await store.usage.addUsageMinutes(['2026-03-01T23:30', '2026-03-02T00:10'].map((minute) => ({
      minute, accountId: 'acc-1', keyId: 'key-1', network: 'mainnet', method: 'eth_call', code: 0, requests: 1, computeUnits: 26, latencyMsSum: 1, latency: [1, 0, 0, 0, 0, 0],
    })));
    assert.deepEqual([await requests('minute'), await requests('hour'), await requests('day')], [6, 6, 6]);
    assert.deepEqual(await store.usage.rollUp('2026-03-03T00:00'), { from: '2026-03-02T00:10', to: '2026-03-02T01:00' }, 'the hours the old flushes wrote are not rolled up again');
    assert.equal(await store.usage.rollUp('2026-03-03T00:00'), undefined);
    assert.deepEqual([await requests('minute'), await requests('hour'), await requests('day')], [6, 6, 6]);
    await store.close();
  });

  test('refuses a store file written by a newer Nodegate', () => {
    const file = freshFile();
    const db = new Database(file);
    db.pragma(`user_version = ${sqliteMigrations.length + 1}`);
    db.close();
    assert.throws(() => sqliteStores(file), /newer than this Nodegate knows/);
  });

  test("a key's value never reaches the file: only its hash", async () => {
    const file = freshFile();
    const store = sqliteStores(file);
    await store.plans.createPlan(freePlan);
    const account = await store.accounts.createAccount(newAccount());
    const { value, key } = newKeyMaterial('secret');
    await store.keys.insertKey(newKey(account.id, key));
    await store.keys.revokeKey(key.id);
    const bytes = Buffer.concat(['', '-wal', '-shm'].filter((s) => existsSync(file + s)).map((s) => readFileSync(file + s)));
    assert.ok(bytes.includes(key.hash), 'the hash is there (the search sees the records)');
    assert.ok(!bytes.includes(value), 'the value is not');
    assert.ok(!bytes.includes(value.slice(key.prefix.length)), 'nor the part of it beyond the listed prefix');
    await store.close();
  });

  test('openStore opens nodegate.db in the data directory when no database URL is set', async () => {
    const dataDir = join(dir, randomUUID(), 'data');
    const store = await openStore({ dataDir, database: {} });
    assert.equal(store.kind, 'sqlite');
    await store.ping();
    assert.ok(existsSync(join(dataDir, 'nodegate.db')));
    await store.close();
  });
});

test("a sent message's body leaves the SQLite file, not only its row: a reset link in it is gone once checkpointed", async () => {
  const file = freshFile();
  const store = sqliteStores(file);
  const link = `https://gateway.example/dashboard/#/reset?token=${randomUUID()}`;
  await store.mail.enqueueMail({ id: randomUUID(), to: 'a@example.com', subject: 'Reset your Nodegate password', body: `Open ${link}`, createdAt: new Date().toISOString() });
  // Checkpointed while waiting (as SQLite does every 1,000 pages): the link is in the file itself, not only the log.
  const waiting = new Database(file);
  waiting.pragma('wal_checkpoint(TRUNCATE)');
  waiting.close();
  assert.equal(readFileSync(file).includes(Buffer.from(link)), true, 'the waiting message is in the file');
  const [mail] = await store.mail.claimMail('me', new Date().toISOString(), new Date(Date.now() + 60_000).toISOString(), 10);
  await store.mail.recordMailAttempt(mail.id, 'me', { sent: true, error: null, at: new Date().toISOString(), nextAttemptAt: new Date().toISOString() });
  await store.close();
  // The write-ahead log folded into the file and emptied, as SQLite's checkpoints do: what is left is the file.
  const db = new Database(file);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const bytes = readFileSync(file);
  assert.equal(bytes.includes(Buffer.from('Reset your Nodegate password')), true, 'the message is still there (its subject)');
  assert.equal(bytes.includes(Buffer.from(link)), false, 'its link is not, anywhere in the file');
});
