import { join } from 'node:path';
import type { Config } from '../config/schema.ts';
import type { Store } from './store.ts';

/** The SQLite file of a configuration without a database URL. */
export const sqlitePath = (config: Pick<Config, 'dataDir'>) => join(config.dataDir, 'nodegate.db');

/** The configured store, migrated and ready: PostgreSQL when `database.url` (DATABASE_URL) is set, else the SQLite file in `dataDir`. */
export async function openStore(config: { dataDir: string; database: Partial<Config['database']> }): Promise<Store> {
  const db = config.database;
  // Only the store in use is loaded: a CLI command on SQLite never pays for pg's modules, nor PostgreSQL for SQLite's.
  if (db.url) {
    const { PostgresStore } = await import('./postgres.ts');
    return PostgresStore.open(db.url, { connectTimeoutMs: db.connectTimeoutMs, queryTimeoutMs: db.queryTimeoutMs });
  }
  const { SqliteStore } = await import('./sqlite.ts');
  return new SqliteStore(sqlitePath(config));
}
