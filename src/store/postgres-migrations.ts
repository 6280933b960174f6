import type pg from 'pg';

/**
 * Versioned migrations of the PostgreSQL store: migration i is version i + 1 in `schema_migrations`. Each runs in
 * its own transaction under an advisory lock (see postgres.ts). Never edit a released migration: add the next one.
 *
 * Types: times are timestamptz (read back as ISO strings); lists are text[] (`pg` answers JS arrays);
 * cu_per_month and usage.compute_units are bigint (billions of compute units exceed int4; read back as JS numbers).
 * Constraint names are the ones PostgreSQL would choose; the store only relies on the column in the violation.
 */
export const postgresMigrations: string[] = [
  // 1: the model of DECISIONS 6. No PostgreSQL store was released before accounts, so no legacy keys here.
  `CREATE TABLE meta (name text PRIMARY KEY, value text NOT NULL);

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

  // 2: compute units used per account and calendar month (UTC), for the monthly quota (DECISIONS 7). One row
  // per account and month, added to by periodic flushes of every instance.
  `CREATE TABLE usage (
     account_id text NOT NULL REFERENCES accounts (id),
     month text NOT NULL CHECK (month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
     compute_units bigint NOT NULL,
     PRIMARY KEY (account_id, month)
   );`,
];

/** Serialises migrations across instances starting at once (advisory locks are per database). 'NGST'. */
const MIGRATION_LOCK = 0x4e475354;

/**
 * Applies pending migrations, each in its own transaction holding a transaction-scoped advisory lock, so
 * instances starting together apply each migration exactly once; the lock also covers creating
 * `schema_migrations` (concurrent CREATE TABLE IF NOT EXISTS can fail).
 */
export async function migratePostgres(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    for (let version = 1; version <= postgresMigrations.length; version++) {
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
        await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
        const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
        const applied = rows[0].v ?? 0;
        if (applied > postgresMigrations.length) {
          throw new Error(`the database is at schema version ${applied}, newer than this Nodegate knows (${postgresMigrations.length})`);
        }
        if (applied < version) {
          await client.query(postgresMigrations[version - 1]);
          await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {}); // the original error is the one to report
        throw err;
      }
    }
  } finally {
    client.release();
  }
}
