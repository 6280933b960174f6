import type { ErrorName } from '../errors/catalogue.ts';
import { GatewayError } from '../errors/gateway-error.ts';

/**
 * Why the store could not write: its disk is full, it is read-only, the disk failed, or the connection to it was
 * lost (a PostgreSQL session ended by the server, a failover, a reset socket).
 */
export type WriteFault = 'full' | 'read-only' | 'io' | 'unreachable';

const ENTRY: Record<WriteFault, ErrorName> = { full: 'STORE_FULL', 'read-only': 'STORE_READ_ONLY', io: 'STORE_IO_ERROR', unreachable: 'STORE_UNREACHABLE' };

/**
 * The connection faults of a PostgreSQL store: the server ended the session (57P01 admin_shutdown, 57P02
 * crash_shutdown, 57P03 cannot_connect_now), a connection exception (class 08), or the socket under it failed.
 */
const UNREACHABLE_ERRNOS = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/**
 * The write fault behind a driver's error, or undefined for any other error. One place for both stores: better-sqlite3
 * names SQLite's (extended) result codes (`SQLITE_FULL`, `SQLITE_READONLY_DBMOVED`, `SQLITE_IOERR_WRITE`...),
 * `pg` PostgreSQL's SQLSTATE (53100 disk_full, 25006 read_only_sql_transaction, 58030 io_error), and Node the file
 * system's errno (the data directory made at start).
 */
export function writeFaultOf(err: unknown): WriteFault | undefined {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  // `pg` ends a query whose socket closed with a plain error of its own, without a code.
  if (code === undefined && typeof message === 'string' && /^Connection terminated( unexpectedly| due to connection timeout)?$/.test(message)) return 'unreachable';
  if (typeof code !== 'string') return undefined;
  if (code === 'SQLITE_FULL' || code === '53100' || code === 'ENOSPC' || code === 'EDQUOT') return 'full';
  if (code.startsWith('SQLITE_READONLY') || code === '25006' || code === 'EROFS') return 'read-only';
  if (code.startsWith('SQLITE_IOERR') || code === '58030' || code === 'EIO') return 'io';
  if (/^57P0[123]$/.test(code) || /^08[0-9A-Z]{3}$/.test(code) || UNREACHABLE_ERRNOS.has(code)) return 'unreachable';
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
