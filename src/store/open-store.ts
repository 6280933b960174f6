import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.ts';
import { redactUrl } from '../errors/redact.ts';
import { openSqlite } from './sqlite-open.ts';
import { accountStore } from './accounts/account-store.ts';
import { alertStore } from './alerts/alert-store.ts';
import { postgresChangeSignals, type ChangeSignals } from './keys/change-signals.ts';
import { keyStore } from './keys/key-store.ts';
import { mailStore } from './mail/mail-store.ts';
import { metaStore } from './meta/meta-store.ts';
import { planStore } from './plans/plan-store.ts';
import { requestStore } from './requests/request-store.ts';
import { sessionStore } from './sessions/session-store.ts';
import { SqlDb } from './sql/sql-db.ts';
import type { Stores } from './stores.ts';
import { memberStore } from './team/member-store.ts';
import { tokenStore } from './team/token-store.ts';
import { usageStore } from './usage/usage-store.ts';
import { webhookEventStore } from './webhooks/webhook-event-store.ts';
import { webhookStore } from './webhooks/webhook-store.ts';

/** The SQLite file of a configuration without a database URL. */
export const sqlitePath = (config: Pick<Config, 'dataDir'>) => join(config.dataDir, 'nodegate.db');

/** The store as a person recognises it (logs, the CLI): the SQLite file's full path, or the database (redacted). */
export function describeStore(config: { dataDir: string; database: Partial<Config['database']> }): string {
  if (config.database.url) return `PostgreSQL ${redactUrl(config.database.url)}`;
  return `SQLite ${resolve(sqlitePath(config))}`;
}

/**
 * The configured store, migrated and ready: PostgreSQL when `database.url` (DATABASE_URL) is set, else the SQLite file
 * in `dataDir`. With `log`, a PostgreSQL that does not take connections yet is waited for, up to
 * `database.startWaitMs` (the gateway's start); without, it fails at once (a management command).
 */
export async function openStore(config: { dataDir: string; database: Partial<Config['database']> }, log?: Logger): Promise<Stores> {
  const db = config.database;
  // pg is loaded only when it is used: a CLI command on SQLite never pays for its modules.
  if (db.url) {
    const { waitForPostgres } = await import('./postgres-start.ts');
    const bounds = { connectTimeoutMs: db.connectTimeoutMs, queryTimeoutMs: db.queryTimeoutMs };
    const open = () => postgresStores(db.url!, bounds);
    return log ? waitForPostgres(open, { waitMs: db.startWaitMs ?? 60_000, where: describeStore(config), log }) : open();
  }
  return sqliteStores(sqlitePath(config));
}

/**
 * The domain stores over one opened, migrated database. `feed`: a connection of its own for the key change feed
 * (KeyStore.changesSince), so that the read that makes a revocation take effect never waits behind the pool's queue;
 * `signals`: word of each change as it commits (KeyStore.signals), so that read is made at once.
 */
export function byDomain(db: SqlDb, feed?: SqlDb, signals?: ChangeSignals): Stores {
  let closing: Promise<void> | undefined;
  return {
    kind: db.dialect, plans: planStore(db), accounts: accountStore(db), keys: keyStore(db, feed, signals), usage: usageStore(db), requests: requestStore(db),
    alerts: alertStore(db), sessions: sessionStore(db), members: memberStore(db), tokens: tokenStore(db), mail: mailStore(db),
    webhooks: webhookStore(db), webhookEvents: webhookEventStore(db), meta: metaStore(db),
    ping: () => db.ping(),
    close: () => (closing ??= Promise.all([db.close(), feed?.close(), signals?.close()]).then(() => undefined)),
  };
}

/** The SQLite store of this file, opened and migrated now (tests and tools that hold a file of their own). */
export function sqliteStores(file: string): Stores {
  return byDomain(SqlDb.sqlite(openSqlite(file)));
}

/**
 * Each connection's settings: no JIT compilation. Nodegate's statements are short (a report reads in tens of ms), and
 * PostgreSQL compiles any statement whose estimate passes `jit_above_cost`, as a report's does (it cannot know how
 * many minute rows are not rolled up yet): 80-100 ms of compiling for a 50 ms read, which took a year's history views
 * from 50-60 ms to 190-250 ms (`SCALE_SECTIONS=history npm run bench -- scale`, plans by auto_explain).
 */
const CONNECTION_OPTIONS = '-c jit=off';

/**
 * The PostgreSQL store at this URL, connected and migrated (safe when several instances start at once). Every I/O is
 * bounded: a server that is down or hung (SIGSTOP, a lost network) fails a connect within connectTimeoutMs and a query
 * within queryTimeoutMs, instead of holding its callers for ever.
 */
export async function postgresStores(url: string, bounds: { connectTimeoutMs?: number; queryTimeoutMs?: number } = {}): Promise<Stores> {
  const [{ default: pg }, { migratePostgres }] = await Promise.all([import('pg'), import('./migrations/migrate-postgres.ts')]);
  const pool = new pg.Pool({ connectionString: url, options: CONNECTION_OPTIONS, connectionTimeoutMillis: bounds.connectTimeoutMs ?? 3000, query_timeout: bounds.queryTimeoutMs ?? 30_000 });
  // An idle connection dropped by the server must not crash the process; the next query reports the failure.
  pool.on('error', () => {});
  try {
    await migratePostgres(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }
  // Under a flood of first-seen keys the pool's queue holds their lookups for seconds; the change feed's read, one
  // every quarter key-cache ttl, goes on a connection of its own, so a revoked key is refused within the ttl all the same.
  const feed = new pg.Pool({ connectionString: url, options: CONNECTION_OPTIONS, max: 1, connectionTimeoutMillis: bounds.connectTimeoutMs ?? 3000, query_timeout: bounds.queryTimeoutMs ?? 30_000 });
  feed.on('error', () => {});
  // One more connection, opened only while an instance follows the changes: keepAlive finds a peer gone silent.
  const signals = postgresChangeSignals(() => new pg.Client({
    connectionString: url, options: CONNECTION_OPTIONS, connectionTimeoutMillis: bounds.connectTimeoutMs ?? 3000, query_timeout: bounds.queryTimeoutMs ?? 30_000, keepAlive: true,
  }));
  return byDomain(SqlDb.postgres(pool), SqlDb.postgres(feed), signals);
}
