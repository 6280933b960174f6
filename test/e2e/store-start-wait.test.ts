/**
 * A gateway started while PostgreSQL does not take connections waits for it (database.startWaitMs), logging each try,
 * and serves once it does: a real PostgreSQL out of connections for the gateway's role (CONNECTION LIMIT 0:
 * 53300), and a server that accepts and closes every connection (down, crashing) until it passes them to the real
 * one. Never reachable, it gives up saying why; a database that does not exist ends the start at the first try.
 * Run: node --import tsx --test test/e2e/store-start-wait.test.ts
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { connect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startInstantNode } from '../helpers/instant-node.ts';
import { ADMIN_URL, freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';

const skip = await postgresSkipReason('start-wait suite');

type Line = { msg: string; attempt?: number; cause?: string; attempts?: number };

/** A log that keeps its lines and tells waiters of each one (the test waits for what the gateway says, not for time). */
function watchedLog() {
  const lines: Line[] = [];
  let waiters: Array<() => void> = [];
  const log = pino({ level: 'info' }, new Writable({
    write(chunk, _e, cb) {
      lines.push(JSON.parse(String(chunk)));
      for (const w of waiters.splice(0)) w();
      cb();
    },
  }));
  /** Resolves once `check` holds of the lines (re-checked at each line); fails after `ms` saying `what`. */
  const until = (check: (l: Line[]) => boolean, ms: number, what: string) => new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not within ${ms} ms: ${what}; lines: ${JSON.stringify(lines)}`)), ms);
    const again = () => { if (check(lines)) { clearTimeout(timer); resolve(); } else waiters.push(again); };
    again();
  });
  return { log, lines, until, waiting: (l: Line[]) => l.filter((x) => x.msg.startsWith('waiting for PostgreSQL')) };
}

/** A loopback server in front of PostgreSQL: while `closing`, it accepts each connection and closes it at once. */
class Gate {
  closing = true;
  port = 0;
  private server: TcpServer | undefined;
  private readonly sockets = new Set<Socket>();

  async start(target: { host: string; port: number }): Promise<void> {
    this.server = createTcpServer((client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client)).on('error', () => {});
      if (this.closing) return void client.destroy();
      const upstream = connect(target.port, target.host);
      this.sockets.add(upstream);
      upstream.on('close', () => { this.sockets.delete(upstream); client.destroy(); }).on('error', () => {});
      client.on('close', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

describe('a start while PostgreSQL takes no connections', { skip, timeout: 120_000 }, () => {
  let node: Server;
  let nodeUrl: string;
  const open: TestGateway[] = [];
  const start = (url: string, log: pino.Logger, database: Record<string, unknown> = {}) =>
    startTestGateway({ networks: { mainnet: { chainId: 1, upstream: nodeUrl } }, database: { url, connectTimeoutMs: 1000, ...database } }, { log })
      .then((g) => { open.push(g); return g; });
  const serves = async (g: TestGateway) => {
    const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.result, '0x1');
    const ready = await fetch(`${g.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal((await ready.json()).checks.store, 'ok');
  };

  before(async () => {
    const instant = await startInstantNode();
    node = instant.server;
    nodeUrl = instant.url;
  });
  after(async () => {
    for (const g of open) await g.close();
    node?.close();
  });

  test('out of connections (53300, the role\'s limit reached): waits, then serves once a connection is free', async () => {
    const url = await freshDatabase();
    const db = new URL(url).pathname.slice(1);
    const role = `ng_wait_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client(ADMIN_URL);
    await admin.connect();
    const w = watchedLog();
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 0`);
      await admin.query(`ALTER DATABASE ${db} OWNER TO ${role}`);
      const asRole = new URL(url);
      asRole.username = role;
      const starting = start(asRole.toString(), w.log);
      await w.until((l) => w.waiting(l).length >= 2, 30_000, 'two tries refused');
      assert.ok(w.waiting(w.lines).every((l) => /^53300: too many connections for role/.test(l.cause!)), JSON.stringify(w.lines));
      await admin.query(`ALTER ROLE ${role} CONNECTION LIMIT -1`);
      const g = await starting;
      await serves(g);
      const took = w.lines.find((l) => l.msg === 'PostgreSQL takes connections: starting');
      assert.ok(took && took.attempts! >= 3, JSON.stringify(took));
      await g.close();
      open.splice(open.indexOf(g), 1);
    } finally {
      // The role owns the migrated tables: they go to postgres, then the role can go.
      const inDb = new pg.Client(url);
      await inDb.connect();
      await inDb.query(`REASSIGN OWNED BY ${role} TO postgres`).catch(() => {});
      await inDb.end();
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
      await admin.end();
    }
  });

  test('down (connections accepted and closed): waits, then serves once they reach PostgreSQL', async () => {
    const url = new URL(await freshDatabase());
    const target = new URL(ADMIN_URL);
    const gate = new Gate();
    await gate.start({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      url.host = `127.0.0.1:${gate.port}`;
      const w = watchedLog();
      const starting = start(url.toString(), w.log);
      await w.until((l) => w.waiting(l).length >= 2, 30_000, 'two tries closed');
      gate.closing = false;
      await serves(await starting);
    } finally {
      await gate.stop();
    }
  });

  test('never reachable: gives up after database.startWaitMs, saying where, why and what to do', async () => {
    const url = new URL(await freshDatabase());
    const gate = new Gate();
    await gate.start({ host: '127.0.0.1', port: 1 });
    try {
      url.host = `127.0.0.1:${gate.port}`;
      const w = watchedLog();
      const t0 = Date.now();
      await assert.rejects(start(url.toString(), w.log, { startWaitMs: 2000 }), (err: Error) => {
        assert.match(err.message, new RegExp(`^PostgreSQL postgres://\\*\\*\\*@127\\.0\\.0\\.1:${gate.port}/\\S+ took no connection within 2 s \\(\\d+ tries; the last: .*Connection terminated`), err.message);
        assert.match(err.message, /Check that PostgreSQL runs, is reachable from here and has connections to spare/);
        return true;
      });
      assert.ok(Date.now() - t0 >= 2000, 'it waited');
      assert.ok(w.waiting(w.lines).length >= 2, 'each try logged');
    } finally {
      await gate.stop();
    }
  });

  test('a database that does not exist: the start ends at the first try (waiting would not create it)', async () => {
    const url = new URL(ADMIN_URL);
    url.pathname = `/nodegate_missing_${randomBytes(4).toString('hex')}`;
    const w = watchedLog();
    await assert.rejects(start(url.toString(), w.log), /refused Nodegate \(3D000: database "nodegate_missing_\w+" does not exist\): create the database, or correct its name in DATABASE_URL/);
    assert.equal(w.waiting(w.lines).length, 0, 'no try again');
  });
});
