/**
 * A store that cannot write, through the wire: the SQLite store on a disk that is really full (a tmpfs of its own,
 * filled to the last byte: SQLite answers SQLITE_FULL), and PostgreSQL really read-only (the database's
 * default_transaction_read_only: 25006). A management change is refused with 503 and the catalogue's error, nothing of
 * it is kept, the body names no path, the log line names the store and the driver's cause; once the fault clears,
 * changes work again, on the same running gateway. And a start on a read-only data directory says which path, why
 * and what to do, instead of "unable to open database file".
 * Run: node --import tsx --test test/e2e/store-write-faults.test.ts
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import pino from 'pino';
import { catalogue } from '../../src/errors/catalogue.ts';
import { startTestGateway } from '../helpers/gateway.ts';
import { startInstantNode } from '../helpers/instant-node.ts';
import { freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';
import { cliCommand } from '../helpers/process.ts';
import { mountTmpfs, tmpfsSkipReason, type Tmpfs } from '../helpers/tmpfs.ts';

const tmpfsSkip = tmpfsSkipReason('store write faults suite (SQLite)');
const pgSkip = await postgresSkipReason('store write faults suite (PostgreSQL)');

type Line = { msg: string; store?: string; fault?: string; cause?: string };

/** A gateway in this process, its log lines kept, its only node one that answers at once. */
async function gatewayWith(raw: Record<string, unknown>, url: string) {
  const lines: Line[] = [];
  const log = pino({ level: 'warn' }, new Writable({ write(chunk, _e, cb) { lines.push(JSON.parse(String(chunk))); cb(); } }));
  const g = await startTestGateway({ networks: { mainnet: { chainId: 1, upstream: url } }, ...raw }, { log });
  const { account } = await g.gw.keys.resolve(g.key);
  const admin = (await g.gw.accounts.createKey(account.id, { name: 'admin', type: 'Restricted', permissions: ['rpc', 'admin', 'webhooks'] })).value;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${g.url}/api/v1${path}`, {
      method, headers: { authorization: `Bearer ${admin}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
  };
  const keyNames = async () => {
    const r = await api('GET', '/keys');
    assert.equal(r.status, 200, r.text);
    return (Array.isArray(r.body) ? r.body : r.body.keys).map((k: { name: string }) => k.name) as string[];
  };
  return { g, lines, api, keyNames };
}

describe('the SQLite store on a full disk: management changes answer 503 store_full, nothing kept, then work again', { skip: tmpfsSkip, timeout: 60_000 }, () => {
  let disk: Tmpfs;
  let node: Server;
  let gw: Awaited<ReturnType<typeof gatewayWith>>;

  before(async () => {
    disk = mountTmpfs(16);
    const instant = await startInstantNode();
    node = instant.server;
    gw = await gatewayWith({ dataDir: disk.dir, webhooks: { allowPrivateTargets: true } }, instant.url);
  });
  after(async () => {
    await gw?.g.close();
    node?.close();
    disk?.unmount();
  });

  test('a key made before the disk fills', async () => {
    const r = await gw.api('POST', '/keys', { name: 'before' });
    assert.equal(r.status, 201, r.text);
  });

  test('full: a new key and a new webhook are refused with 503 store_full; reads still answer; no row kept', async () => {
    disk.fill();
    const key = await gw.api('POST', '/keys', { name: 'while full' });
    assert.equal(key.status, 503, key.text);
    assert.deepEqual(key.body, { error: { code: 'store_full', message: catalogue.STORE_FULL.message } });
    assert.doesNotMatch(key.text, new RegExp(`${disk.dir}|SQLITE|nodegate\\.db`), 'no path and no driver detail in the body');
    const hook = await gw.api('POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: 'http://127.0.0.1:9/hook' });
    assert.equal(hook.status, 503, hook.text);
    assert.equal(hook.body.error.code, 'store_full');
    const names = await gw.keyNames();
    assert.ok(names.includes('before') && !names.includes('while full'), `reads answer; the refused key is not kept: ${names.join(', ')}`);
    const hooks = await gw.api('GET', '/webhooks');
    assert.equal(hooks.status, 200, hooks.text);
    assert.equal((Array.isArray(hooks.body) ? hooks.body : hooks.body.webhooks).length, 0, 'the refused webhook is not kept');
    const line = gw.lines.find((l) => l.fault === 'full');
    assert.ok(line, `a log line of the fault: ${JSON.stringify(gw.lines)}`);
    assert.equal(line.store, `SQLite ${join(disk.dir, 'nodegate.db')}`, 'the line names the file');
    assert.match(line.cause!, /^SQLITE_FULL: database or disk is full$/, 'and the cause');
    assert.match(line.msg, /the store cannot write \(full\)/);
    assert.ok(!gw.lines.some((l) => /unhandled error/.test(l.msg)), 'not logged as a bug');
  });

  test('space freed: the same gateway takes changes again', async () => {
    disk.free();
    const r = await gw.api('POST', '/keys', { name: 'after' });
    assert.equal(r.status, 201, r.text);
    const names = await gw.keyNames();
    assert.ok(names.includes('before') && names.includes('after') && !names.includes('while full'), names.join(', '));
    const hook = await gw.api('POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: 'http://127.0.0.1:9/hook' });
    assert.equal(hook.status, 201, hook.text);
  });
});

describe('PostgreSQL read-only (25006): management changes answer 503 store_read_only, then work again', { skip: pgSkip, timeout: 60_000 }, () => {
  let node: Server;
  let gw: Awaited<ReturnType<typeof gatewayWith>>;
  let admin: pg.Client;
  let name: string;

  /** The database's default for new sessions, and every session of it ended so that the pool's next ones take it. */
  const readOnly = async (on: boolean) => {
    await admin.query(`ALTER DATABASE ${name} ${on ? 'SET default_transaction_read_only = on' : 'RESET default_transaction_read_only'}`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  };

  before(async () => {
    const url = await freshDatabase();
    name = new URL(url).pathname.slice(1);
    admin = new pg.Client(url.replace(/\/[^/]*$/, '/postgres'));
    await admin.connect();
    const instant = await startInstantNode();
    node = instant.server;
    gw = await gatewayWith({ database: { url } }, instant.url);
  });
  after(async () => {
    await gw?.g.close();
    node?.close();
    await admin?.end();
  });

  /**
   * A change asked until the database itself answers it: each of the pool's connections ended by `readOnly` fails the
   * query that meets it first (503 store_unreachable, the lost connection), and the pool drops it; a key check that
   * met one marks the store down until its next probe (one a second) is answered.
   */
  const newKey = async (name: string) => {
    const until = Date.now() + 20_000;
    for (;;) {
      const r = await gw.api('POST', '/keys', { name });
      if (r.body?.error?.code !== 'store_unreachable' || Date.now() > until) return r;
      assert.equal(r.status, 503, r.text);
      await sleep(50);
    }
  };

  test('read-only: a new key is refused with 503 store_read_only and not kept; writable again: it is made', async () => {
    await readOnly(true);
    const r = await newKey('while read-only');
    assert.equal(r.status, 503, `${r.text}: ${JSON.stringify(gw.lines.filter((l) => /unhandled error/.test(l.msg)))}`);
    assert.deepEqual(r.body, { error: { code: 'store_read_only', message: catalogue.STORE_READ_ONLY.message } });
    assert.ok(!(await gw.keyNames()).includes('while read-only'));
    const line = gw.lines.find((l) => l.fault === 'read-only');
    assert.ok(line && /^PostgreSQL postgres:\/\//.test(line.store!) && /^25006: /.test(line.cause!), JSON.stringify(line));
    await readOnly(false);
    const ok = await newKey('writable');
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(gw.lines.filter((l) => /unhandled error/.test(l.msg)), [], 'an ended session is a lost connection, not a bug');
    const lost = gw.lines.filter((l) => l.fault === 'unreachable');
    assert.ok(lost.every((l) => /^PostgreSQL postgres:\/\//.test(l.store!)
      && (/^(57P01: |ECONNRESET: |Connection terminated)/.test(l.cause!) || /could not be reached to check the caller's key/.test(l.msg))), JSON.stringify(lost));
  });
});

/** `nodegate start` on `dataDir`, to its exit: the code and what it printed. */
function startOn(dataDir: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, NODEGATE_DATA_DIR: dataDir, NODEGATE_PORT: '0', NODEGATE_HOST: '127.0.0.1' };
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, [...cliCommand(), 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => { out += s; });
    child.stderr.setEncoding('utf8').on('data', (s: string) => { out += s; });
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('a start on a data directory that cannot be written says which path, why and what to do', { skip: tmpfsSkip, timeout: 120_000 }, () => {
  test('read-only file system, with a store in it and without', async () => {
    const disk = mountTmpfs(16);
    try {
      // A store made there while it was writable, then the file system remounted read-only (nothing holds it open).
      const instant = await startInstantNode();
      const made = await startTestGateway({ dataDir: join(disk.dir, 'data'), networks: { mainnet: { chainId: 1, upstream: instant.url } } });
      await made.close();
      instant.server.close();
      disk.remount('ro');
      for (const dir of [join(disk.dir, 'data'), join(disk.dir, 'new')]) {
        const { code, out } = await startOn(dir);
        assert.equal(code, 1, out);
        const file = join(dir, 'nodegate.db');
        assert.match(out, new RegExp(`cannot open the SQLite store ${file}: ${dir === join(disk.dir, 'new') ? disk.dir : dir} is on a read-only file system; mount it read-write, or set dataDir \\(NODEGATE_DATA_DIR\\) to a folder that is writable`), out);
        assert.doesNotMatch(out, /^nodegate: unable to open database file$/m);
      }
    } finally {
      disk.unmount();
    }
  });

  test('full disk', async () => {
    const disk = mountTmpfs(8);
    try {
      disk.fill();
      const { code, out } = await startOn(join(disk.dir, 'data'));
      assert.equal(code, 1, out);
      assert.match(out, new RegExp(`cannot open the SQLite store ${join(disk.dir, 'data', 'nodegate.db')}: the disk holding ${disk.dir}\\S* is full \\(0 bytes free\\); free space on it, or set dataDir`), out);
    } finally {
      disk.unmount();
    }
  });
});
