import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.ts';
import { redactUrl } from '../errors/redact.ts';
import type { Stores } from './stores.ts';
import { accountStore } from './accounts/account-store.ts';
import { keyStore } from './keys/key-store.ts';
import { planStore } from './plans/plan-store.ts';
import { sessionStore } from './sessions/session-store.ts';
import { memberStore } from './team/member-store.ts';
import { tokenStore } from './team/token-store.ts';
import type { PostgresStore } from './postgres.ts';
import { SqliteStore } from './sqlite.ts';

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
  // Only the store in use is loaded: a CLI command on SQLite never pays for pg's modules, nor PostgreSQL for SQLite's.
  if (db.url) {
    const [{ PostgresStore }, { waitForPostgres }] = await Promise.all([import('./postgres.ts'), import('./postgres-start.ts')]);
    const bounds = { connectTimeoutMs: db.connectTimeoutMs, queryTimeoutMs: db.queryTimeoutMs };
    const open = async () => byDomain(await PostgresStore.open(db.url!, bounds));
    return log ? waitForPostgres(open, { waitMs: db.startWaitMs ?? 60_000, where: describeStore(config), log }) : open();
  }
  const { SqliteStore } = await import('./sqlite.ts');
  return byDomain(new SqliteStore(sqlitePath(config)));
}

/** The domain stores over one opened database. */
export function byDomain(legacy: SqliteStore | PostgresStore): Stores {
  const db = legacy.sqlDb();
  return {
    kind: legacy.kind, plans: planStore(db), accounts: accountStore(db), keys: keyStore(db), usage: legacy, alerts: legacy,
    sessions: sessionStore(db), members: memberStore(db), tokens: tokenStore(db), mail: legacy, webhooks: legacy, webhookEvents: legacy, meta: legacy,
    ping: () => legacy.ping(), close: () => legacy.close(),
  };
}

/** The SQLite store of this file, opened and migrated now (tests and tools that hold a file of their own). */
export function sqliteStores(file: string): Stores {
  return byDomain(new SqliteStore(file));
}

/** The PostgreSQL store at this URL, connected and migrated (tests and tools). */
export async function postgresStores(url: string, bounds: { connectTimeoutMs?: number; queryTimeoutMs?: number } = {}): Promise<Stores> {
  const { PostgresStore } = await import('./postgres.ts');
  return byDomain(await PostgresStore.open(url, bounds));
}
