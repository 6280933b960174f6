import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createServer as createTcpServer, connect, type Server as TcpServer, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { monthOf } from '../../src/limits/quota.ts';
import { postgresStores } from '../../src/store/open-store.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startInstantNode } from '../helpers/instant-node.ts';
import { ADMIN_URL, freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';

/**
 * A lost store is not an outage: a gateway on PostgreSQL reached through a TCP relay on loopback that
 * the test stops (connections cut and refused, as a stopped server) or hangs (bytes no longer passed either way, as
 * a server under SIGSTOP), while callers keep calling. Keys seen recently are served from memory, a key never seen
 * gets 503 store_unavailable, /readyz says degraded (still 200), one log line opens and one closes each outage, and
 * the usage of the outage reaches the store once it is back.
 */
const skip = await postgresSkipReason('store outage suite');

/** A relay to PostgreSQL: `stop()` cuts every connection and refuses new ones, `hang()` stops passing bytes. */
class Relay {
  private server: TcpServer | undefined;
  private readonly pairs = new Set<[Socket, Socket]>();
  private hung = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    this.server = createTcpServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      const drop = () => { client.destroy(); upstream.destroy(); this.pairs.delete(pair); };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.on('data', (b) => { if (!this.hung) upstream.write(b); });
      upstream.on('data', (b) => { if (!this.hung) client.write(b); });
    });
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    for (const [a, b] of this.pairs) { a.destroy(); b.destroy(); }
    this.pairs.clear();
    await new Promise<void>((r) => (s ? s.close(() => r()) : r()));
  }

  hang(): void { this.hung = true; }

  /** Passes bytes again; connections that were hung are cut (their protocol state is lost), as a restarted server would. */
  async resume(): Promise<void> {
    this.hung = false;
    for (const [a, b] of this.pairs) { a.destroy(); b.destroy(); }
    this.pairs.clear();
  }
}

describe('a lost store is not an outage: PostgreSQL stopped, then hung, under calls', { skip, timeout: 120_000 }, () => {
  let node: Server;
  let relay: Relay;
  let g: TestGateway;
  let url: string;
  let neverUsed: string;
  let accountId: string;
  const lines: Array<{ msg: string; servedFromMemory?: number; refused?: number }> = [];
  let ok = 0;
  let closed = false;

  const chainId = () => g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
  const readyz = async () => (await fetch(`${g.url}/readyz`)).json() as Promise<{ status: string; checks: Record<string, string>; store: { down: boolean } }>;
  /**
   * Calls with the demo key for `ms` from `clients` callers at once, every one of which must succeed; resolves with
   * how many and the slowest.
   */
  const callFor = async (ms: number, clients = 1) => {
    const end = Date.now() + ms;
    let n = 0;
    let slowest = 0;
    await Promise.all(Array.from({ length: clients }, async () => {
      while (Date.now() < end) {
        const t = Date.now();
        const r = await chainId();
        slowest = Math.max(slowest, Date.now() - t);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.result, '0x1', r.text);
        n++;
      }
    }));
    ok += n;
    return { n, slowest };
  };

  before(async () => {
    // A node that answers eth_chainId at once: only the store can fail here.
    const instant = await startInstantNode();
    node = instant.server;
    url = await freshDatabase();
    const admin = new URL(ADMIN_URL);
    relay = new Relay({ host: admin.hostname, port: Number(admin.port || 5432) });
    await relay.start();
    const viaRelay = new URL(url);
    viaRelay.host = `127.0.0.1:${relay.port}`;
    const log = pino({ level: 'warn' }, new Writable({ write(chunk, _e, cb) { lines.push(JSON.parse(String(chunk))); cb(); } }));
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1, upstream: instant.url } },
      database: { url: viaRelay.toString(), connectTimeoutMs: 500, queryTimeoutMs: 2000 },
      // Keys asked of the store again every 100 ms, so the outage is met at once; a request waits 300 ms for it.
      auth: { keyCacheTtlMs: 100, storeWaitMs: 300 },
      limits: { usageFlushMs: 200 },
    }, { log });
    const k = await g.gw.keys.resolve(g.key);
    accountId = k.account.id;
    neverUsed = (await g.gw.accounts.createKey(accountId, { name: 'never used' })).value;
  });
  after(async () => {
    if (!closed) await g?.close();
    await relay?.stop();
    node?.close();
  });

  test('before: calls answered, /readyz ready', async () => {
    await callFor(300);
    assert.equal((await readyz()).status, 'ready');
  });

  test('stopped: every call of a key seen recently answered; a key never seen gets 503 store_unavailable; /readyz 200 degraded', async () => {
    await relay.stop();
    // An outage of 15 s, four callers calling all along.
    const { n } = await callFor(15_000, 4);
    const unseen = await g.rpc({ jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] }, { key: neverUsed });
    assert.equal(unseen.status, 503, unseen.text);
    assert.equal(unseen.body.error.code, -32002);
    assert.equal(unseen.body.error.data.reason, 'store_unavailable');
    assert.doesNotMatch(unseen.text, /127\.0\.0\.1|postgres|ECONNREFUSED/, 'no store detail in the body');
    const res = await fetch(`${g.url}/readyz`);
    assert.equal(res.status, 200, 'a lost store drains no instance');
    const body = await res.json();
    assert.equal(body.status, 'degraded');
    assert.match(body.checks.store, /^degraded/);
    assert.equal(body.store.down, true);
    await relay.start();
    await callFor(1500);
    console.log(`# stopped for 15 s: ${n} calls from 4 callers answered from memory, 0 failed`);
  });

  test('hung: calls still answered, none waiting more than the store wait and some slack; /readyz answers, degraded', async () => {
    relay.hang();
    const { n, slowest } = await callFor(3000);
    const t = Date.now();
    const body = await readyz();
    const readyMs = Date.now() - t;
    assert.equal(body.status, 'degraded');
    // The request path waits auth.storeWaitMs (300 ms) once, then no more; /readyz waits 1 s for the store. A busy
    // machine adds to both; the bound that matters to a caller is its own deadline (rpc.timeoutMs, 30 s).
    assert.ok(slowest < 5000, `slowest call ${slowest} ms`);
    assert.ok(readyMs < 5000, `/readyz took ${readyMs} ms`);
    await relay.resume();
    await callFor(1500);
    console.log(`# hung for 3 s: ${n} calls answered, slowest ${slowest} ms; /readyz in ${readyMs} ms`);
  });

  test('one log line opens each outage and one closes it, with what was served from memory', () => {
    const opened = lines.filter((l) => l.msg.startsWith('store unreachable'));
    const closed = lines.filter((l) => l.msg === 'store reachable again');
    assert.equal(opened.length, 2, JSON.stringify(lines.map((l) => l.msg)));
    assert.equal(closed.length, 2, JSON.stringify(lines.map((l) => l.msg)));
    assert.ok(closed[0].servedFromMemory! > 0 && closed[0].refused! >= 1, JSON.stringify(closed[0]));
  });

  test('after: /readyz ready again, and the usage of every call made reached the store', async () => {
    assert.equal((await readyz()).status, 'ready');
    await g.close();
    closed = true;
    const store = await postgresStores(url);
    try {
      // eth_chainId costs 5 units; readyz and the refused call cost nothing.
      assert.equal(await store.usage.getUsage(accountId, monthOf(Date.now())), ok * 5);
    } finally {
      await store.close();
    }
  });
});
