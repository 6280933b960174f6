import type { Logger } from 'pino';
import { driverCause } from './write-fault.ts';

/** The first pause between two tries, ms; each pause doubles, up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;

/**
 * Refusals that pass: the server is down or restarting (refused, reset, timed out, SQLSTATE class 08, 57P01-57P03),
 * or out of connections (53300: `max_connections` or the role's limit reached), or its name not resolvable yet (a
 * container whose service is still starting). Anything else (28P01 a wrong password, 28000 no such role or no
 * pg_hba.conf entry, 3D000 no such database, an error of the migrations) does not pass by waiting.
 */
const PASSING_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
const PASSING_SQLSTATE = new Set(['53300', '57P01', '57P02', '57P03']);

export function passesByWaiting(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') return PASSING_ERRNO.has(code) || PASSING_SQLSTATE.has(code) || code.startsWith('08');
  // `pg`'s own connection failures carry no code: the socket closed under it, or its connect time-out.
  return typeof message === 'string' && /connection terminated|timeout exceeded when trying to connect|connection timeout/i.test(message);
}

/** What to do about a refusal waiting does not mend, by SQLSTATE. */
const ADVICE: Record<string, string> = {
  '28P01': 'check the user and password in DATABASE_URL (database.url)',
  '28000': 'check the user in DATABASE_URL (database.url) and that pg_hba.conf lets it in from this host',
  '3D000': 'create the database, or correct its name in DATABASE_URL (database.url)',
  '42501': 'grant the user the right to create tables in the database (the schema is migrated at start)',
};

/** The start could not reach a usable PostgreSQL; its message says which database, why, and what to do. */
export class StoreStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreStartError';
  }
}

/**
 * `open()`, tried again with back-off while PostgreSQL refuses in a way that passes (down, starting, out of
 * connections) for up to `waitMs`: an instance started with its database (a compose file, a restart of both) or
 * while it is busy waits rather than exits. Every try is logged, with what it waits for. A refusal that does not
 * pass ends the start at once, as does the wait running out, with a message that says why and what to do.
 */
export async function waitForPostgres<T>(open: () => Promise<T>, o: {
  waitMs: number;
  where: string;
  log: Logger;
  /** The clock and the pause (tests). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}): Promise<T> {
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = o.now ?? Date.now;
  const started = now();
  let pause = RETRY_FIRST_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      const store = await open();
      if (attempt > 1) o.log.info({ store: o.where, attempts: attempt, waitedMs: now() - started }, 'PostgreSQL takes connections: starting');
      return store;
    } catch (err) {
      const cause = driverCause(err);
      const code = (err as { code?: unknown }).code;
      if (!passesByWaiting(err)) {
        const advice = typeof code === 'string' ? ADVICE[code] : undefined;
        if (!advice) throw err;
        throw new StoreStartError(`${o.where} refused Nodegate (${cause}): ${advice}; waiting would not change this`, { cause: err });
      }
      const waitedMs = now() - started;
      const left = o.waitMs - waitedMs;
      if (left <= 0) {
        throw new StoreStartError(
          `${o.where} took no connection within ${Math.round(o.waitMs / 1000)} s (${attempt} tries; the last: ${cause}). `
          + 'Check that PostgreSQL runs, is reachable from here and has connections to spare (max_connections, the role\'s '
          + 'connection limit), or give it longer with database.startWaitMs',
          { cause: err },
        );
      }
      const next = Math.min(pause, left);
      o.log.warn({ store: o.where, attempt, waitedMs, nextInMs: next, waitMs: o.waitMs, cause },
        `waiting for PostgreSQL to take connections (${cause}): try ${attempt + 1} in ${next} ms, giving up after ${Math.round(o.waitMs / 1000)} s`);
      await sleep(next);
      pause = Math.min(pause * 2, RETRY_MAX_MS);
    }
  }
}
