import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { ADMIN_URL, postgresSkipReason } from '../../../test/helpers/postgres.ts';
import { SqlDb } from './sql-db.ts';

const skip = await postgresSkipReason('SqlDb on PostgreSQL');

test('a PostgreSQL connection lost while a transaction holds it fails that transaction, not the process', { skip }, async () => {
  const pool = new pg.Pool({ connectionString: ADMIN_URL });
  pool.on('error', () => {});
  const db = SqlDb.postgres(pool);
  const other = new pg.Client(ADMIN_URL);
  await other.connect();
  try {
    const lost = db.write(async (q) => {
      const { rows: [{ pid }] } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(q);
      // The server ends the connection between two statements: nothing is in flight to fail but the client itself.
      await other.query('SELECT pg_terminate_backend($1)', [pid]);
      await new Promise((r) => setTimeout(r, 200));
      return sql`SELECT 1`.execute(q);
    });
    await assert.rejects(lost, /not queryable|terminat/);
    const { rows } = await sql<{ n: number }>`SELECT 2 AS n`.execute(db.k);
    assert.deepEqual(rows, [{ n: 2 }], 'the pool answers again, on another connection');
  } finally {
    await other.end();
    await pool.end();
  }
});
