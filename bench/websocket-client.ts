/**
 * The load generator of `npm run bench -- websocket` (bench/websocket.ts), a process of its own so that none of its
 * work is counted in the measured one. Driven over IPC by the bench:
 *   {type:'subscribe', url, sockets, perSocket}  opens the sockets, eth_subscribe newHeads on each → {type:'subscribed'}
 *   {type:'count'}                               → {type:'count', delivered}
 *   {type:'report'}                              → per block, the receive times of its notifications since the last report
 *   {type:'close'}                               → closes the sockets → {type:'closed'}
 *   {type:'load', transport, url, workload, warmup, seconds, inFlight}
 *                                                → {type:'measuring'} after the warm-up, {type:'loaded', ...} at the end
 * Times are performance.timeOrigin + performance.now(), ms: the same clock as the bench's on this machine.
 */
import { Pool } from 'undici';
import WebSocket from 'ws';

type Msg = Record<string, any>;
const reply = (m: Msg) => process.send!(m);
const now = () => performance.timeOrigin + performance.now();

// ---- fan-out ----
const sockets: WebSocket[] = [];
/** Block number → receive times of its notifications. */
const received = new Map<number, number[]>();
/** Subscription id → the last block number it was sent, to find duplicates and blocks out of order. */
const lastBlock = new Map<string, number>();
let delivered = 0;
let duplicates = 0;
let outOfOrder = 0;
let gaps = 0;

async function subscribe(url: string, count: number, perSocket: number): Promise<Msg> {
  let failed = 0;
  await Promise.all(Array.from({ length: count }, async () => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    sockets.push(ws);
    await new Promise<void>((res, rej) => { ws.once('open', () => res()); ws.once('error', rej); });
    const pending = new Map<number, (a: Msg) => void>();
    ws.on('message', (data: Buffer) => {
      const t = now();
      const m = JSON.parse(data.toString());
      if (m.method === 'eth_subscription') {
        const id: string = m.params.subscription;
        const n = Number(m.params.result.number);
        const last = lastBlock.get(id);
        if (last !== undefined && n === last) duplicates++;
        else if (last !== undefined && n < last) outOfOrder++;
        else if (last !== undefined && n > last + 1) gaps += n - last - 1;
        lastBlock.set(id, n);
        delivered++;
        let ts = received.get(n);
        if (!ts) received.set(n, (ts = []));
        ts.push(t);
        return;
      }
      pending.get(m.id)?.(m);
      pending.delete(m.id);
    });
    const answers = await Promise.all(Array.from({ length: perSocket }, (_, i) => new Promise<Msg>((res) => {
      pending.set(i + 1, res);
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'eth_subscribe', params: ['newHeads'] }));
    })));
    failed += answers.filter((a) => typeof a.result !== 'string').length;
  }));
  return { type: 'subscribed', subscriptions: count * perSocket - failed, failed };
}

/** What came since the last report (the counters start again from zero; the sockets stay open). */
function report(): Msg {
  const blocks: Record<number, number[]> = {};
  for (const [n, ts] of received) blocks[n] = ts;
  const r = { type: 'report', blocks, delivered, duplicates, outOfOrder, gaps, subscriptions: lastBlock.size };
  received.clear();
  delivered = duplicates = outOfOrder = gaps = 0;
  return r;
}

// ---- request/answer ----
const ADDRESS0 = Math.floor(Math.random() * 2 ** 40);
function body(workload: string, id: number): string {
  if (workload === 'eth_blockNumber') return `{"jsonrpc":"2.0","id":${id},"method":"eth_blockNumber","params":[]}`;
  // A distinct address per request: no cache or coalescing could answer two with one upstream call.
  const address = (ADDRESS0 + id).toString(16).padStart(40, '0');
  return `{"jsonrpc":"2.0","id":${id},"method":"eth_getBalance","params":["0x${address}","latest"]}`;
}

interface Phase { measuring: boolean; done: boolean; requests: number; failed: number; latencies: number[] }

/** `inFlight` requests in flight at all times over one WebSocket (pipelined, matched by id). */
async function overWs(url: string, workload: string, inFlight: number, phase: Phase): Promise<void> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise<void>((res, rej) => { ws.once('open', () => res()); ws.once('error', rej); });
  const started = new Map<number, number>();
  let id = 0;
  let open = 0;
  let drained: () => void = () => {};
  const sendOne = () => {
    const i = ++id;
    started.set(i, performance.now());
    open++;
    ws.send(body(workload, i));
  };
  ws.on('message', (data: Buffer) => {
    const text = data.toString();
    const m = JSON.parse(text);
    const t0 = started.get(m.id);
    started.delete(m.id);
    open--;
    if (phase.measuring && t0 !== undefined) {
      phase.requests++;
      if (m.error !== undefined || m.result === undefined) phase.failed++;
      phase.latencies.push(performance.now() - t0);
    }
    if (!phase.done) sendOne();
    else if (open === 0) drained();
  });
  for (let i = 0; i < inFlight; i++) sendOne();
  await new Promise<void>((res) => { const t = setInterval(() => { if (phase.done) { clearInterval(t); res(); } }, 20); });
  if (open > 0) await new Promise<void>((res) => { drained = res; });
  ws.close();
}

/** `inFlight` HTTP keep-alive connections, one request in flight on each. */
async function overHttp(url: string, workload: string, inFlight: number, phase: Phase): Promise<void> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: inFlight, pipelining: 1, keepAliveTimeout: 30_000 });
  let id = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (!phase.done) {
      const t0 = performance.now();
      let ok = false;
      try {
        const r = await pool.request({ path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json' }, body: body(workload, ++id) });
        const m = JSON.parse(await r.body.text());
        ok = r.statusCode === 200 && m.error === undefined && m.result !== undefined;
      } catch {
        ok = false;
      }
      if (phase.measuring) {
        phase.requests++;
        if (!ok) phase.failed++;
        phase.latencies.push(performance.now() - t0);
      }
    }
  }));
  await pool.close();
}

async function load(m: Msg): Promise<Msg> {
  const phase: Phase = { measuring: false, done: false, requests: 0, failed: 0, latencies: [] };
  const run = (m.transport === 'ws' ? overWs : overHttp)(m.url, m.workload, m.inFlight, phase);
  await new Promise((r) => setTimeout(r, m.warmup * 1000));
  const t0 = performance.now();
  phase.measuring = true;
  reply({ type: 'measuring' });
  await new Promise((r) => setTimeout(r, m.seconds * 1000));
  phase.measuring = false;
  const seconds = (performance.now() - t0) / 1000;
  phase.done = true;
  await run;
  const l = phase.latencies.sort((a, b) => a - b);
  const pct = (p: number) => (l.length ? l[Math.min(l.length - 1, Math.floor(p * l.length))] : NaN);
  return { type: 'loaded', requests: phase.requests, failed: phase.failed, seconds, p50: pct(0.5), p99: pct(0.99) };
}

process.on('message', (m: Msg) => {
  const answer = m.type === 'subscribe' ? subscribe(m.url, m.sockets, m.perSocket)
    : m.type === 'count' ? Promise.resolve({ type: 'count', delivered })
    : m.type === 'report' ? Promise.resolve(report())
    : m.type === 'close' ? Promise.resolve(sockets.splice(0).forEach((ws) => ws.close())).then(() => ({ type: 'closed' }))
    : m.type === 'load' ? load(m)
    : Promise.reject(new Error(`unknown message ${m.type}`));
  answer.then(reply, (err: Error) => reply({ type: 'error', message: String(err?.stack ?? err) }));
});
process.once('disconnect', () => process.exit(0));
reply({ type: 'ready' });
