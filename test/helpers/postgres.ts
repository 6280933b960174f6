import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import pg from 'pg';

/**
 * The real PostgreSQL the suites run against (STYLE principle 11): trust auth on 127.0.0.1:5432 unless
 * NODEGATE_TEST_POSTGRES_URL says otherwise. Each run works in databases of its own, dropped at the end.
 */
export const ADMIN_URL = process.env.NODEGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const postgresWhere = `${new URL(ADMIN_URL).hostname}:${new URL(ADMIN_URL).port || 5432}`;

export async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Why a suite that needs PostgreSQL must be skipped (undefined: it is there). Unreachable with CI set is a failing
 * test, not a skip: a suite that cannot run there would otherwise pass silently.
 */
export async function postgresSkipReason(suite: string): Promise<string | undefined> {
  if (await postgresReachable()) return undefined;
  const reason = `PostgreSQL not reachable at ${postgresWhere}`;
  if (process.env.CI) test(`PostgreSQL is reachable at ${postgresWhere} (required when CI is set)`, () => assert.fail(`${reason}: the ${suite} cannot run, and CI requires it`));
  else console.warn(`${suite} skipped: ${reason} (set CI to make this a failure)`);
  return reason;
}

const created: string[] = [];
// Registered at import, at the top level: it runs once the file's tests are all done (inside a hook it would
// run as soon as that hook ended).
after(async () => {
  if (created.length === 0) return;
  const admin = new pg.Client(ADMIN_URL);
  await admin.connect();
  for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

/**
 * A new, empty database (its URL); dropped when the file's tests are done. `options`: what CREATE DATABASE is given
 * after the name (a collation of its own, say).
 */
export async function freshDatabase(options = ''): Promise<string> {
  const name = `nodegate_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client(ADMIN_URL);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} ${options}`);
  await admin.end();
  created.push(name);
  const url = new URL(ADMIN_URL);
  url.pathname = '/' + name;
  return url.toString();
}
