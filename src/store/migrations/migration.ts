import type { Dialect } from '../sql/tables.ts';

/**
 * One step of the schema, in the one ordered list (index.ts), with its DDL on each dialect. A dialect without an
 * entry never had what the step changes, and skips it: each dialect's version counts the steps it has.
 */
export interface Migration {
  /** What the step makes, in a few words; unique in the list. */
  readonly name: string;
  readonly sqlite?: string;
  readonly postgres?: string;
}

/** Column types as each dialect spells them; a step written once says which kind each column is. */
export interface ColumnTypes {
  text: string;
  /** Up to 2^31 (counts, codes, limits). */
  int: string;
  /** Up to 2^63: compute units, sums of them, sequence numbers. SQLite's INTEGER is 64-bit already. */
  big: string;
  /** SQLite keeps times as ISO 8601 text in UTC (`toISOString`), which sorts as it reads. */
  time: string;
  real: string;
  json: string;
  /** After a table's closing parenthesis: SQLite keeps a table with a primary key and no rowid in its key's order. */
  rowless: string;
}

const TYPES: Record<Dialect, ColumnTypes> = {
  sqlite: { text: 'TEXT', int: 'INTEGER', big: 'INTEGER', time: 'TEXT', real: 'REAL', json: 'TEXT', rowless: ' WITHOUT ROWID' },
  postgres: { text: 'text', int: 'integer', big: 'bigint', time: 'timestamptz', real: 'double precision', json: 'jsonb', rowless: '' },
};

/** A step written once for both dialects: the same DDL, with each dialect's column types. */
export function both(name: string, ddl: string | ((t: ColumnTypes) => string)): Migration {
  const of = (d: Dialect) => (typeof ddl === 'string' ? ddl : ddl(TYPES[d]));
  return { name, sqlite: of('sqlite'), postgres: of('postgres') };
}
