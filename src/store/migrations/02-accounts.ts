import type { Migration } from './migration.ts';

const NOW = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;

/**
 * Accounts, plans, and keys that belong to an account (docs/decisions.md §6).
 *
 * SQLite: keys made before accounts existed are already in clients' hands, and worked without limits; they keep
 * working: the step gives them (only if there are any) one account, `legacy`, that cannot log in, on a plan `legacy`
 * as large as the largest default plan. The operator can move that account to another plan and delete `legacy`. They
 * become Standard keys without restrictions, which is what they were. api_keys is rebuilt (SQLite's documented way) so
 * account_id can be NOT NULL and a foreign key. Lists are JSON text; booleans 0/1; times ISO 8601 text in UTC
 * (`toISOString`), which sorts as it reads.
 *
 * PostgreSQL: the whole model at once (no keys before it). Times are timestamptz (read back as ISO strings); lists
 * are text[] (`pg` answers JS arrays); cu_per_month is bigint (billions of compute units exceed int4).
 */
export const accounts: Migration = {
  name: 'accounts',
  sqlite: `CREATE TABLE plans (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     cu_per_second INTEGER NOT NULL,
     cu_per_month INTEGER NOT NULL,
     max_batch_size INTEGER NOT NULL,
     debug_methods INTEGER NOT NULL CHECK (debug_methods IN (0, 1)),
     max_filters INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     email TEXT NOT NULL,
     email_normalized TEXT NOT NULL UNIQUE,
     password_hash TEXT,
     status TEXT NOT NULL CHECK (status IN ('active', 'suspended')),
     role TEXT NOT NULL CHECK (role IN ('operator', 'member')),
     plan_id TEXT NOT NULL REFERENCES plans (id),
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX accounts_plan_id ON accounts (plan_id);

   INSERT INTO plans (id, name, cu_per_second, cu_per_month, max_batch_size, debug_methods, max_filters, created_at, updated_at)
     SELECT 'legacy', 'Legacy (keys from before accounts)', 5000, 10000000000, 1000, 1, 5000, ${NOW}, ${NOW}
     WHERE EXISTS (SELECT 1 FROM api_keys);
   INSERT INTO accounts (id, name, email, email_normalized, password_hash, status, role, plan_id, created_at, updated_at)
     SELECT 'legacy', 'Keys from before accounts', 'legacy@nodegate.invalid', 'legacy@nodegate.invalid', NULL,
            'active', 'member', 'legacy', ${NOW}, ${NOW}
     WHERE EXISTS (SELECT 1 FROM api_keys);

   CREATE TABLE api_keys_v2 (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts (id),
     name TEXT NOT NULL,
     type TEXT NOT NULL CHECK (type IN ('Standard', 'Dedicated', 'Restricted')),
     permissions TEXT NOT NULL,
     prefix TEXT NOT NULL,
     hash TEXT NOT NULL UNIQUE,
     ip_allowlist TEXT NOT NULL DEFAULT '[]',
     origin_allowlist TEXT NOT NULL DEFAULT '[]',
     network_allowlist TEXT NOT NULL DEFAULT '[]',
     method_allowlist TEXT NOT NULL DEFAULT '[]',
     expires_at TEXT,
     created_at TEXT NOT NULL,
     last_used_at TEXT,
     revoked_at TEXT
   );
   INSERT INTO api_keys_v2 (id, account_id, name, type, permissions, prefix, hash, created_at, revoked_at)
     SELECT id, 'legacy', name, 'Standard', '["rpc","webhooks","analytics"]', prefix, hash, created_at, revoked_at
     FROM api_keys;
   DROP TABLE api_keys;
   ALTER TABLE api_keys_v2 RENAME TO api_keys;
   CREATE INDEX api_keys_account_id ON api_keys (account_id);`,
  postgres: `CREATE TABLE meta (name text PRIMARY KEY, value text NOT NULL);

   CREATE TABLE plans (
     id text PRIMARY KEY,
     name text NOT NULL,
     cu_per_second integer NOT NULL,
     cu_per_month bigint NOT NULL,
     max_batch_size integer NOT NULL,
     debug_methods boolean NOT NULL,
     max_filters integer NOT NULL,
     created_at timestamptz NOT NULL,
     updated_at timestamptz NOT NULL
   );

   CREATE TABLE accounts (
     id text PRIMARY KEY,
     name text NOT NULL,
     email text NOT NULL,
     -- lower-cased by the store (the same folding as on SQLite), unique: emails are case-insensitive.
     email_normalized text NOT NULL UNIQUE,
     password_hash text,
     status text NOT NULL CHECK (status IN ('active', 'suspended')),
     role text NOT NULL CHECK (role IN ('operator', 'member')),
     plan_id text NOT NULL REFERENCES plans (id),
     created_at timestamptz NOT NULL,
     updated_at timestamptz NOT NULL
   );
   CREATE INDEX accounts_plan_id ON accounts (plan_id);

   CREATE TABLE api_keys (
     id text PRIMARY KEY,
     account_id text NOT NULL REFERENCES accounts (id),
     name text NOT NULL,
     type text NOT NULL CHECK (type IN ('Standard', 'Dedicated', 'Restricted')),
     permissions text[] NOT NULL,
     prefix text NOT NULL,
     hash text NOT NULL UNIQUE,
     ip_allowlist text[] NOT NULL DEFAULT '{}',
     origin_allowlist text[] NOT NULL DEFAULT '{}',
     network_allowlist text[] NOT NULL DEFAULT '{}',
     method_allowlist text[] NOT NULL DEFAULT '{}',
     expires_at timestamptz,
     created_at timestamptz NOT NULL,
     last_used_at timestamptz,
     revoked_at timestamptz
   );
   CREATE INDEX api_keys_account_id ON api_keys (account_id);`,
};
