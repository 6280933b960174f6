import { resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver } from 'kysely';

/** Whoever holds it runs; the others wait their turn, without blocking the thread. */
class Turn {
  private held = false;
  private readonly waiting: (() => void)[] = [];

  async take(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return;
    }
    await new Promise<void>((r) => this.waiting.push(r));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
}

/** One turn per database file in this process, whatever the connections to it. */
const turns = new Map<string, Turn>();

/**
 * Kysely's SQLite dialect, its queries taking turns with every other connection of this process to the same file.
 * better-sqlite3 waits for a lock synchronously (busy_timeout), holding the thread: a second connection of the
 * process that writes while the first is inside a transaction between two awaits would wait for a lock that the
 * waiting thread itself keeps from being released, and fail after busy_timeout. Taking turns, it waits for its
 * turn instead. Another process on the file is unaffected: there busy_timeout is the wait, as before.
 */
export class FileSqliteDialect extends SqliteDialect {
  constructor(private readonly database: BetterSqlite3.Database) {
    super({ database });
  }

  override createDriver(): Driver {
    const turn = this.database.memory ? new Turn() : turns.get(resolve(this.database.name)) ?? new Turn();
    if (!this.database.memory) turns.set(resolve(this.database.name), turn);
    return new TurnTakingDriver(this.database, turn);
  }
}

/** Kysely asks for the one connection before every query or transaction and gives it back after: the turn's span. */
class TurnTakingDriver extends SqliteDriver {
  constructor(database: BetterSqlite3.Database, private readonly turn: Turn) {
    super({ database });
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.turn.take();
    return super.acquireConnection();
  }

  override async releaseConnection(): Promise<void> {
    this.turn.give();
  }
}
