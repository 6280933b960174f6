import type { Migration } from './migration.ts';

/**
 * The key store of 0.1, before accounts: released on SQLite only (no PostgreSQL store was released before
 * accounts, so PostgreSQL has no such step and starts at the next).
 */
export const keyStore: Migration = {
  name: 'key-store',
  sqlite: `CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     prefix TEXT NOT NULL,
     hash TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   );`,
};
