import type pg from 'pg';
import { migrationsOf, newerThanKnown } from './index.ts';

const steps = migrationsOf('postgres');

/** Serialises migrations across instances starting at once (advisory locks are per database). 'NGST'. */
const MIGRATION_LOCK = 0x4e475354;

/**
 * Applies the pending steps (version v in `schema_migrations`: the v-th step PostgreSQL has), each in its own
 * transaction holding a transaction-scoped advisory lock, so instances starting together apply each step exactly
 * once; the lock also covers creating `schema_migrations` (concurrent CREATE TABLE IF NOT EXISTS can fail).
 */
export async function migratePostgres(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    for (let version = 1; version <= steps.length; version++) {
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
        await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
        const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
        const applied = rows[0].v ?? 0;
        if (applied > steps.length) throw newerThanKnown(applied, steps.length);
        if (applied < version) {
          await client.query(steps[version - 1]);
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
