import { sql, type Expression, type SqlBool } from 'kysely';
import type { SqlDb } from './sql-db.ts';

/**
 * `column` is one of `values`, the list passed as one parameter: PostgreSQL takes a text[] (`= ANY`), SQLite a JSON
 * array it reads with `json_each`. Kysely's `in` spends a parameter per value: a statement text per length of list,
 * and a bound on its length (SQLite takes 32,766 parameters, PostgreSQL 65,535) that a heartbeat naming every event in
 * flight, or a look-up of many ids, must not meet.
 */
export function anyOf(db: SqlDb, column: string, values: readonly string[]): Expression<SqlBool> {
  return db.dialect === 'postgres'
    ? sql<SqlBool>`${sql.ref(column)} = ANY(${[...values]}::text[])`
    : sql<SqlBool>`${sql.ref(column)} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
}

/** `values` as the parameter of a statement compiled with `anyOf` (the list given then stands for any list). */
export function anyOfParameter(db: SqlDb, values: readonly string[]): string[] | string {
  return db.dialect === 'postgres' ? [...values] : JSON.stringify(values);
}
