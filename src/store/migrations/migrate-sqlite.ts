import type Database from 'better-sqlite3';
import { migrationsOf, newerThanKnown } from './index.ts';

const steps = migrationsOf('sqlite');

/**
 * Brings the file's schema up to date: the steps after `PRAGMA user_version` (how many ran), each in its own
 * transaction with the version it reaches. Synchronous, as the file is opened: better-sqlite3 runs a script of
 * several statements (triggers with their bodies) at once, and the store is usable when its constructor returns.
 */
export function migrateSqlite(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > steps.length) throw newerThanKnown(version, steps.length);
  for (let v = version; v < steps.length; v++) {
    db.transaction(() => {
      db.exec(steps[v]);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
