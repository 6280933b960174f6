// Runs alone (scripts/run-tests.mjs): another tenant's delivery times against quiet (2x).
/**
 * A slow receiver delays only its own webhook (with deliveries in rounds that wait for every delivery, and a
 * `timeoutMs` that bounds the gap between chunks, not the attempt, a receiver trickling a byte every 4 s holds another
 * tenant's webhook to 1 block of 30 in 30 s; one that never answers raises others' median delay 143 -> 4,318 ms).
 * Here a trickling receiver (a byte every 300 ms, forever) and a silent one run beside a healthy receiver; the
 * healthy webhook's delay (block mined -> event received) is measured quiet and then with both bad receivers, back
 * to back in the same test, and every bad attempt is cut at webhooks.timeoutMs (the whole attempt).
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const TIMEOUT_MS = 1500;
const BLOCKS = 12;

const api = async (g: TestGateway, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${g.url}/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${g.key}`, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as { port: number }).port}/hook`;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe('webhooks: a slow receiver delays only its own webhook', { timeout: 120_000 }, () => {
  let g: TestGateway;
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const trickles = new Set<NodeJS.Timeout>();
  /** Arrival time of each block at the healthy receiver, by block number. */
  const arrived = new Map<number, number>();
  let waiters: Array<() => void> = [];
  let trickleHits = 0;
  let silentHits = 0;
  const urls = { healthy: '', trickle: '', silent: '' };

  before(async () => {
    const track = (s: Server) => { servers.push(s); s.on('connection', (c) => { sockets.add(c); c.on('close', () => sockets.delete(c)); }); return s; };
    urls.healthy = await listen(track(createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const j = JSON.parse(body);
        if (j.type === 'block.mined' && !arrived.has(Number(j.event.number))) arrived.set(Number(j.event.number), performance.now());
        res.writeHead(200).end();
        for (const w of waiters.splice(0)) w();
      });
    })));
    // Headers at once, then one byte every 300 ms for ever: never a gap that an idle time-out would notice.
    urls.trickle = await listen(track(createServer((req, res: ServerResponse) => {
      trickleHits++;
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('.');
      const t = setInterval(() => res.write('.'), 300);
      trickles.add(t);
      res.on('close', () => { clearInterval(t); trickles.delete(t); });
    })));
    // Reads the request, never answers.
    urls.silent = await listen(track(createServer((req) => { silentHits++; req.resume(); })));
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1 } },
      rpc: { extraMethods: { mainnet: ['anvil_mine'] } },
      upstreams: { checkIntervalMs: 50 },
      webhooks: { allowPrivateTargets: true, pollMs: 50, retryBaseMs: 100, timeoutMs: TIMEOUT_MS },
    });
  });
  after(async () => {
    await g?.close();
    for (const t of trickles) clearInterval(t);
    for (const c of sockets) c.destroy();
    for (const s of servers) s.close();
  });

  /** Mines BLOCKS blocks 150 ms apart; answers each block's delay at the healthy receiver, ms. */
  const run = async (): Promise<number[]> => {
    const mined = new Map<number, number>();
    const start = Number((await g.call<{ number: string }>('eth_getBlockByNumber', ['latest', false])).number);
    for (let i = 1; i <= BLOCKS; i++) {
      await g.call('anvil_mine', ['0x1']); // one block each: start + i
      mined.set(start + i, performance.now());
      await sleep(150); // the pace of a chain: blocks arrive one by one, not as one burst
    }
    const end = Date.now() + 30_000;
    while (![...mined.keys()].every((n) => arrived.has(n)) && Date.now() < end) await new Promise<void>((r) => { waiters.push(r); setTimeout(r, 200); });
    const missing = [...mined.keys()].filter((n) => !arrived.has(n));
    assert.deepEqual(missing, [], 'every block reached the healthy receiver');
    return [...mined].map(([n, t]) => arrived.get(n)! - t);
  };

  test('the healthy webhook keeps its delay while a trickling and a silent receiver run; their attempts end at the deadline', async () => {
    const healthy = await api(g, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: urls.healthy });
    assert.equal(healthy.status, 201);
    const quiet = await run();

    const bad: string[] = [];
    for (const url of [urls.trickle, urls.silent]) {
      const r = await api(g, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url });
      assert.equal(r.status, 201);
      bad.push(r.body.id);
    }
    const attacked = await run();
    // Each bad webhook's first attempt was cut at the deadline: its delivery log says so.
    const logs = await Promise.all(bad.map(async (id) => (await api(g, 'GET', `/webhooks/${id}/deliveries?limit=500`)).body.deliveries as Array<{ attempts: number; lastError: string | null; status: string }>));
    const cut = logs.map((l) => l.filter((e) => e.attempts > 0 && /within 1500 ms/.test(e.lastError ?? '')).length);
    console.log(`healthy webhook delay, ms: quiet median ${median(quiet).toFixed(0)} [${quiet.map((x) => x.toFixed(0)).join(' ')}]; `
      + `with a trickling and a silent receiver median ${median(attacked).toFixed(0)} [${attacked.map((x) => x.toFixed(0)).join(' ')}]; `
      + `bad receivers hit ${trickleHits} (trickle) and ${silentHits} (silent) times; attempts cut at ${TIMEOUT_MS} ms: ${cut.join(', ')}`);
    assert.ok(trickleHits >= 1 && silentHits >= 1, 'both bad receivers were being delivered to meanwhile');
    assert.ok(cut.every((n) => n >= 1), 'the bad receivers\' attempts ended at the whole-attempt deadline');
    assert.ok(logs.every((l) => l.every((e) => e.status !== 'delivered')), 'nothing from a bad receiver counted as delivered');
    // Within 2x of quiet; the 100 ms floor keeps a loaded CI machine's jitter on a ~50 ms quiet median from failing it,
    // while rounds that wait for every delivery give 1,500 ms (the silent receiver) to never (the trickle).
    assert.ok(median(attacked) <= Math.max(2 * median(quiet), median(quiet) + 100), `median ${median(attacked).toFixed(0)} ms against ${median(quiet).toFixed(0)} ms quiet`);
    for (const id of [...bad, healthy.body.id]) await api(g, 'DELETE', `/webhooks/${id}`);
  });
});
