import type { ErrorName } from '../errors/catalogue.ts';
import { GatewayError } from '../errors/gateway-error.ts';

/** Why the store could not write: its disk is full, it is read-only, or the disk failed. */
export type WriteFault = 'full' | 'read-only' | 'io';

const ENTRY: Record<WriteFault, ErrorName> = { full: 'STORE_FULL', 'read-only': 'STORE_READ_ONLY', io: 'STORE_IO_ERROR' };

/**
 * The write fault behind a driver's error, or undefined for any other error. One place for both stores: better-sqlite3
 * names SQLite's (extended) result codes (`SQLITE_FULL`, `SQLITE_READONLY_DBMOVED`, `SQLITE_IOERR_WRITE`...),
 * `pg` PostgreSQL's SQLSTATE (53100 disk_full, 25006 read_only_sql_transaction, 58030 io_error), and Node the file
 * system's errno (the data directory made at start).
 */
export function writeFaultOf(err: unknown): WriteFault | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  if (typeof code !== 'string') return undefined;
  if (code === 'SQLITE_FULL' || code === '53100' || code === 'ENOSPC' || code === 'EDQUOT') return 'full';
  if (code.startsWith('SQLITE_READONLY') || code === '25006' || code === 'EROFS') return 'read-only';
  if (code.startsWith('SQLITE_IOERR') || code === '58030' || code === 'EIO') return 'io';
  return undefined;
}

/**
 * The catalogue's error for a write fault (503, a message that names no path and no driver detail), with the driver's
 * error as its cause; undefined for any other error.
 */
export function writeFaultError(err: unknown): GatewayError | undefined {
  const fault = writeFaultOf(err);
  return fault && new GatewayError(ENTRY[fault], {}, { cause: err });
}

/** The driver's own words for the log (its code and message: they may name a server-side path, never a password). */
export function driverCause(err: unknown): string {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return [code, message].filter((x) => typeof x === 'string' && x.length > 0).join(': ') || String(err);
}
