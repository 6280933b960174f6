/**
 * A provider's keys in a throwaway PostgreSQL database, through the store's own schema (the real migrations): accounts
 * and keys made by the server itself (generate_series, sha256), so a million rows take seconds and nothing crosses
 * the socket but the statements. Key `j`'s value is `valueOf(salt, j)`: the wrk scripts rebuild it from `j`.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { postgresStores } from '../bench-stores.ts';
import type { Stores } from '../../src/store/stores.ts';

/** The PostgreSQL the tests use (test/helpers/postgres.ts), not imported: that module registers test hooks. */
const ADMIN_URL = process.env.NODEGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The plan every account is on: too generous to limit (the bench measures keys, not limits). */
export const SCALE_PLAN = { id: 'scale', name: 'Scale', cuPerSecond: 1_000_000_000, cuPerMonth: 1_000_000_000_000_000, maxBatchSize: 1000, debugMethods: true, maxFilters: 100 };

export interface KeyState {
  url: string;
  salt: string;
  keys: number;
  accounts: number;
  /** Keys of account 0 (keys 0 … bigAccount - 1; key 0 also has the admin permission). */
  bigAccount: number;
  buildMs: number;
  drop(): Promise<void>;
}

/**
 * The PostgreSQL server's process (its postmaster), read from its data directory: undefined when this process cannot
 * read it (another machine, another user), and the bench then prints no store CPU.
 */
export async function postgresServerPid(url: string): Promise<number | undefined> {
  const db = new pg.Client(url);
  await db.connect();
  try {
    const dir = (await db.query<{ data_directory: string }>('SHOW data_directory')).rows[0].data_directory;
    return Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined;
  } catch {
    return undefined;
  } finally {
    await db.end();
  }
}

/** The store at `url`, as another instance writes it (a revocation made elsewhere). */
export const storeAt = (url: string): Promise<Stores> => postgresStores(url);

/** The value of key `j`: `ngk_` + the run's salt + j in 7 digits. */
export const valueOf = (salt: string, j: number) => `ngk_${salt}${String(j).padStart(7, '0')}`;

export async function buildKeyState(accounts: number, keys: number, bigAccount: number): Promise<KeyState> {
  const name = `nodegate_bench_scale_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client(ADMIN_URL);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = Object.assign(new URL(ADMIN_URL), { pathname: '/' + name }).toString();
  const drop = async () => {
    const a = new pg.Client(ADMIN_URL);
    await a.connect();
    await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await a.end();
  };
  const salt = randomBytes(18).toString('base64').replace(/[^0-9A-Za-z]/g, '').slice(0, 20).padEnd(20, 'x');
  const t0 = Date.now();
  const stores: Stores = await postgresStores(url);
  await stores.plans.createPlan(SCALE_PLAN);
  await stores.close();
  const db = new pg.Client(url);
  await db.connect();
  try {
    await db.query(`INSERT INTO accounts (id, name, email, email_normalized, password_hash, status, role, plan_id, created_at, updated_at)
      SELECT 'acct' || i, 'Account ' || i, 'scale' || i || '@bench.invalid', 'scale' || i || '@bench.invalid', NULL, 'active', 'member', $1,
             now() - interval '1 day', now() - interval '1 day'
      FROM generate_series(0, $2::int - 1) AS i`, [SCALE_PLAN.id, accounts]);
    // Account 0 holds the first `bigAccount` keys; the others are spread over the rest. Creation times a millisecond
    // apart, so the keys list pages in a known order.
    await db.query(`INSERT INTO api_keys (id, account_id, name, type, permissions, prefix, hash, created_at)
      SELECT 'key' || j,
             CASE WHEN j < $3 THEN 'acct0' ELSE 'acct' || (1 + (j - $3) % ($2::int - 1)) END,
             'key ' || j, 'Restricted',
             CASE WHEN j = 0 THEN ARRAY['rpc', 'admin'] ELSE ARRAY['rpc'] END,
             left(v, 8), encode(sha256(convert_to(v, 'UTF8')), 'hex'),
             date_trunc('milliseconds', now()) - interval '1 day' + j * interval '1 millisecond'
      FROM (SELECT j, 'ngk_' || $4 || lpad(j::text, 7, '0') AS v FROM generate_series(0, $1::int - 1) AS j) AS s`, [keys, accounts, bigAccount, salt]);
    await db.query('ANALYZE');
  } finally {
    await db.end();
  }
  return { url, salt, keys, accounts, bigAccount, buildMs: Date.now() - t0, drop };
}
