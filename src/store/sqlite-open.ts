import { accessSync, constants, existsSync, mkdirSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { migrateSqlite } from './migrations/migrate-sqlite.ts';
import { driverCause, writeFaultOf } from './write-fault.ts';

/**
 * The SQLite file opened in WAL mode (crash-safe, readers never block the writer) and migrated. A file that cannot be
 * opened or written fails with a message that names its path, why (a read-only file system, a missing permission, a
 * full disk) and what to do: SQLite itself says only "unable to open database file".
 */
export function openSqlite(file: string): Database.Database {
  let db: Database.Database | undefined;
  try {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    migrateSqlite(db);
    return db;
  } catch (err) {
    db?.close();
    throw file === ':memory:' ? err : explainOpen(err, resolve(file));
  }
}

/**
 * Codes of a file that could not be opened or written (anything else, a migration's own error, goes on as it is).
 * ENOENT: Node's recursive mkdir says so on a read-only file system.
 */
const OPENING = /^(SQLITE_CANTOPEN|SQLITE_READONLY|SQLITE_FULL|SQLITE_IOERR|SQLITE_NOTADB|SQLITE_PERM|EACCES|EPERM|EROFS|ENOSPC|ENOTDIR|EEXIST|ENOENT)/;

/** Why `file` cannot be opened, found by asking the file system, as an error that says what to do. */
export function explainOpen(err: unknown, file: string): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !OPENING.test(code)) return err;
  const dir = dirname(file);
  const said = driverCause(err);
  const reason = diagnose(dir, file, err);
  const message = reason
    ? `cannot open the SQLite store ${file}: ${reason.why}; ${reason.fix} (${said})`
    : `cannot open the SQLite store ${file} (${said}): check that ${dir} is a folder this user (uid ${uid()}) may write in, on a disk with space left, and that ${file} is a Nodegate database; or set dataDir (NODEGATE_DATA_DIR) to another folder`;
  return Object.assign(new Error(message, { cause: err }), { code });
}

const ELSEWHERE = 'or set dataDir (NODEGATE_DATA_DIR) to a folder that is';
const uid = () => process.getuid?.() ?? 'unknown';

function diagnose(dir: string, file: string, err: unknown): { why: string; fix: string } | undefined {
  // The folder, or the nearest one above it that exists (making the folder may be what failed).
  let at = dir;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  const denied = writeDenied(at) ?? (existsSync(file) ? writeDenied(file) : undefined);
  if (denied === 'EROFS') {
    return { why: `${at} is on a read-only file system`, fix: `mount it read-write, ${ELSEWHERE} writable` };
  }
  if (denied === 'EACCES' || denied === 'EPERM') {
    return { why: `this user (uid ${uid()}) may not write in ${at}${at === dir ? '' : ` (to make ${dir})`}`, fix: `give it write permission on the folder and its nodegate.db* files (chown or chmod), ${ELSEWHERE} its own` };
  }
  const free = freeBytes(at);
  if (free === 0 || writeFaultOf(err) === 'full') {
    return { why: `the disk holding ${at} is full (${free ?? 'unknown'} bytes free)`, fix: `free space on it, ${ELSEWHERE} on another disk` };
  }
  return undefined;
}

/** Why this process may not write `path` (EROFS, EACCES, EPERM), or undefined when it may. */
function writeDenied(path: string): string | undefined {
  try {
    accessSync(path, constants.W_OK);
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code;
  }
}

function freeBytes(path: string): number | undefined {
  try {
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}
