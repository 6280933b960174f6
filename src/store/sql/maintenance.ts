import { sql } from 'kysely';
import type { SqlDb } from './sql-db.ts';
import type { Q } from './tables.ts';

/**
 * One write transaction of retention (a roll-up, a prune). On PostgreSQL the server ends any of its statements that
 * runs past 30 s: a statement held up behind other instances' locks must not hold its own for ever. SQLite has one
 * writer, whose wait for the file is busy_timeout.
 */
export function maintenanceWrite<T>(db: SqlDb, fn: (q: Q) => Promise<T>): Promise<T> {
  return db.write(async (q) => {
    if (db.dialect === 'postgres') await sql`SET LOCAL statement_timeout = '30s'`.execute(q);
    return fn(q);
  });
}
