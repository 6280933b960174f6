import type { Migration } from './migration.ts';

/** The table and the plans' two bounds; `id` as each dialect makes a growing integer key. */
const ddl = (id: string, t: { text: string; int: string; time: string; real: string }) => `CREATE TABLE request_log (
     id ${id},
     at ${t.time} NOT NULL,
     account_id ${t.text} NOT NULL,
     key_id ${t.text} NOT NULL,
     network ${t.text} NOT NULL,
     method ${t.text} NOT NULL,
     code ${t.int} NOT NULL,
     message ${t.text},
     latency_ms ${t.real} NOT NULL,
     compute_units ${t.int} NOT NULL,
     request_bytes ${t.int} NOT NULL,
     response_bytes ${t.int} NOT NULL,
     cache ${t.text},
     node ${t.text},
     request_id ${t.text} NOT NULL,
     params ${t.text},
     sample_every ${t.int} NOT NULL
   );
   CREATE INDEX request_log_account ON request_log (account_id, id);
   CREATE INDEX request_log_request_id ON request_log (account_id, request_id);
   CREATE INDEX request_log_at ON request_log (at);
   ALTER TABLE plans ADD COLUMN request_log_hours ${t.int} NOT NULL DEFAULT 24 CHECK (request_log_hours >= 0);
   ALTER TABLE plans ADD COLUMN request_log_max ${t.int} NOT NULL DEFAULT 10000 CHECK (request_log_max >= 0);`;

/**
 * The request explorer's records (analytics/request-log.ts): one row per call, newest by `id`, found per account by
 * id (pages, the count bound) and by request id; `at` for the time bound. Each plan says how long and how many.
 */
export const requestLog: Migration = {
  name: 'request-log',
  sqlite: ddl('INTEGER PRIMARY KEY', { text: 'TEXT', int: 'INTEGER', time: 'TEXT', real: 'REAL' }),
  postgres: ddl('bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY', { text: 'text', int: 'integer', time: 'timestamptz', real: 'double precision' }),
};
