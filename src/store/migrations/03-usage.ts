import type { Migration } from './migration.ts';

/**
 * Compute units used per account and calendar month (UTC), for the monthly quota (docs/decisions.md §7). One row
 * per account and month, added to by the periodic flushes of every instance; 64-bit, so billions of units fit. The
 * dialects check the month each in its own way (GLOB, a regular expression).
 */
export const usage: Migration = {
  name: 'usage',
  sqlite: `CREATE TABLE usage (
     account_id TEXT NOT NULL REFERENCES accounts (id),
     month TEXT NOT NULL CHECK (month GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]' AND substr(month, 6) BETWEEN '01' AND '12'),
     compute_units INTEGER NOT NULL,
     PRIMARY KEY (account_id, month)
   ) WITHOUT ROWID;`,
  postgres: `CREATE TABLE usage (
     account_id text NOT NULL REFERENCES accounts (id),
     month text NOT NULL CHECK (month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
     compute_units bigint NOT NULL,
     PRIMARY KEY (account_id, month)
   );`,
};
