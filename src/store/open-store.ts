import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.ts';
import { redactUrl } from '../errors/redact.ts';
import type { Store } from './store.ts';

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
export async function openStore(config: { dataDir: string; database: Partial<Config['database']> }, log?: Logger): Promise<Store> {
  const db = config.database;
  // Only the store in use is loaded: a CLI command on SQLite never pays for pg's modules, nor PostgreSQL for SQLite's.
  if (db.url) {
    const [{ PostgresStore }, { waitForPostgres }] = await Promise.all([import('./postgres.ts'), import('./postgres-start.ts')]);
    const bounds = { connectTimeoutMs: db.connectTimeoutMs, queryTimeoutMs: db.queryTimeoutMs };
    const open = () => PostgresStore.open(db.url!, bounds);
    return log ? waitForPostgres(open, { waitMs: db.startWaitMs ?? 60_000, where: describeStore(config), log }) : open();
  }
  const { SqliteStore } = await import('./sqlite.ts');
  return new SqliteStore(sqlitePath(config));
}
