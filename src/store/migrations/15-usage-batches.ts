import type { Migration } from './migration.ts';

/**
 * The ids of the usage batches applied, so that a batch sent again (a write that timed out for its sender but
 * committed, then retried) is not counted twice; kept a day, far longer than any retry.
 */
export const usageBatches: Migration = {
  name: 'usage-batches',
  sqlite: `CREATE TABLE usage_batches (id TEXT PRIMARY KEY, at TEXT NOT NULL);
   CREATE INDEX usage_batches_at ON usage_batches (at);`,
  postgres: `CREATE TABLE usage_batches (id text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now());
   CREATE INDEX usage_batches_at ON usage_batches (at);`,
};
