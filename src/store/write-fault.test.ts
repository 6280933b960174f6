import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { writeFaultError, writeFaultOf } from './write-fault.ts';

/** The error better-sqlite3 throws for `sql` on `db`. */
function thrown(db: Database.Database, sql: string): unknown {
  try {
    db.exec(sql);
  } catch (err) {
    return err;
  }
  assert.fail(`${sql} did not fail`);
}

test("SQLite's own errors: a database at its size limit is full, one opened read-only is read-only; both 503 from the catalogue", () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodegate-fault-'));
  try {
    const file = join(dir, 'x.db');
    const db = new Database(file);
    db.exec('CREATE TABLE t (x TEXT)');
    // The page limit is where SQLite reports SQLITE_FULL, as on a full disk.
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`);
    const full = thrown(db, `INSERT INTO t VALUES ('${'x'.repeat(10_000)}')`);
    assert.equal(writeFaultOf(full), 'full');
    assert.deepEqual(writeFaultError(full)?.toJSON(), { code: -32002, message: 'the store is full: nothing was changed; try again once the operator has freed space', data: { reason: 'store_full' } });
    db.close();
    const ro = new Database(file, { readonly: true });
    const readOnly = thrown(ro, "INSERT INTO t VALUES ('y')");
    assert.equal((readOnly as { code: string }).code, 'SQLITE_READONLY');
    assert.equal(writeFaultOf(readOnly), 'read-only');
    assert.equal(writeFaultError(readOnly)?.status, 503);
    ro.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("PostgreSQL's SQLSTATEs, a lost connection and the file system's errnos; anything else is not a write fault", () => {
  const coded = (code: string) => Object.assign(new Error('x'), { code });
  assert.deepEqual(['53100', '25006', '58030', 'ENOSPC', 'EROFS', 'SQLITE_IOERR_WRITE', 'SQLITE_READONLY_DBMOVED'].map((c) => writeFaultOf(coded(c))),
    ['full', 'read-only', 'io', 'full', 'read-only', 'io', 'read-only']);
  assert.deepEqual(['57P01', '08006', 'ECONNRESET', 'ECONNREFUSED'].map((c) => writeFaultOf(coded(c))), Array(4).fill('unreachable'));
  assert.equal(writeFaultOf(new Error('Connection terminated unexpectedly')), 'unreachable', "pg's own, without a code");
  assert.equal(writeFaultError(coded('57P01'))?.data.reason, 'store_unreachable');
  for (const other of [coded('23505'), coded('SQLITE_CONSTRAINT_UNIQUE'), coded('42P01'), new Error('x'), undefined, null, 'text']) {
    assert.equal(writeFaultOf(other), undefined, String(other));
    assert.equal(writeFaultError(other), undefined);
  }
});
