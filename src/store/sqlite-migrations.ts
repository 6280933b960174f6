/**
 * Versioned migrations of the SQLite store, applied in order at start-up inside one transaction each.
 * Never edit a released migration: add the next one.
 */
export const sqliteMigrations: string[] = [
  `CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     prefix TEXT NOT NULL,
     hash TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   );`,
];
