import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { StoreConflictError } from '../store-errors.ts';
import { postgresCodec, sqliteCodec, type Codec } from './codec.ts';
import { FileSqliteDialect } from './sqlite-dialect.ts';
import type { Dialect, Q, Tables } from './tables.ts';


/** A broken uniqueness or reference rule, as each driver reports it, reduced to what a message needs. */
export type Violation = { kind: 'unique'; column: string } | { kind: 'reference' };

/**
 * The database under every domain store: one Kysely instance on SQLite (better-sqlite3) or PostgreSQL (pg), the
 * codec of its column types, its one way to run a write transaction, and its reading of constraint failures.
 * Queries are written once with Kysely; a store branches on `dialect` only where the two truly differ.
 */
export class SqlDb {
  private constructor(
    readonly dialect: Dialect,
    readonly k: Kysely<Tables>,
    readonly codec: Codec,
    private readonly violationOf: (err: unknown) => Violation | undefined,
  ) {}

  static sqlite(database: BetterSqlite3.Database): SqlDb {
    return new SqlDb('sqlite', new Kysely<Tables>({ dialect: new FileSqliteDialect(database) }), sqliteCodec, sqliteViolation);
  }

  static postgres(pool: pg.Pool): SqlDb {
    // A connection lost while Kysely holds its client (between a transaction's statements, or a server stopped
    // mid-query) is an 'error' event on that client, which `pg` leaves to whoever checked it out; unheard, it ends the
    // process. The statement running reports the loss itself, and the pool drops the client when it is given back.
    pool.on('acquire', (client) => client.on('error', ignore));
    pool.on('release', (_err, client) => client.removeListener('error', ignore));
    return new SqlDb('postgres', new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) }), postgresCodec, postgresViolation);
  }

  /**
   * Runs `fn` in one write transaction. On SQLite it begins IMMEDIATE: the write lock is taken first, so another
   * process on the file (the CLI while the server runs) waits for it (busy_timeout) instead of failing mid-way, and a
   * read-merge-write inside loses no update. Queries inside must go through the `q` given.
   */
  async write<T>(fn: (q: Q) => Promise<T>): Promise<T> {
    if (this.dialect === 'postgres') return this.k.transaction().execute(fn);
    return this.k.connection().execute(async (c) => {
      await sql`BEGIN IMMEDIATE`.execute(c);
      try {
        const out = await fn(c);
        await sql`COMMIT`.execute(c);
        return out;
      } catch (err) {
        await sql`ROLLBACK`.execute(c).catch(() => {});
        throw err;
      }
    });
  }

  /**
   * Runs a write whose guard is the database's own constraints (no read-then-write race, on either dialect), turning
   * their violations into StoreConflictError with a message in the operation's terms; anything else is rethrown.
   */
  async guard<T>(run: () => Promise<T>, message: (v: Violation) => string): Promise<T> {
    try {
      return await run();
    } catch (err) {
      const violation = this.violationOf(err);
      if (violation) throw new StoreConflictError(message(violation));
      throw err;
    }
  }

  /** Rows changed by an update, insert or delete result. */
  static changed(result: { numUpdatedRows?: bigint; numDeletedRows?: bigint; numInsertedOrUpdatedRows?: bigint } | readonly { numUpdatedRows?: bigint; numDeletedRows?: bigint; numInsertedOrUpdatedRows?: bigint }[]): number {
    const one = Array.isArray(result) ? result[0] : result;
    return Number(one?.numUpdatedRows ?? one?.numDeletedRows ?? one?.numInsertedOrUpdatedRows ?? 0n);
  }

  /** A round trip to the database (/readyz): answers once it answered. */
  async ping(): Promise<void> {
    await sql`SELECT 1`.execute(this.k);
  }

  async close(): Promise<void> {
    await this.k.destroy();
  }
}

const ignore = () => {};

/** better-sqlite3 reports constraint failures by code, and names the column in the message. */
function sqliteViolation(err: unknown): Violation | undefined {
  const { code, message } = err as { code?: string; message?: string };
  if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return { kind: 'reference' };
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    return { kind: 'unique', column: /\.(\w+)$/.exec(message ?? '')?.[1] ?? '' };
  }
  return undefined;
}

/** PostgreSQL names the violated column in `detail`: `Key (email_normalized)=(...) already exists.` */
function postgresViolation(err: unknown): Violation | undefined {
  const { code, detail } = err as { code?: string; detail?: string };
  if (code === '23503') return { kind: 'reference' };
  if (code === '23505') return { kind: 'unique', column: /Key \((\w+)\)/.exec(detail ?? '')?.[1] ?? '' };
  return undefined;
}
