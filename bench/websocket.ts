/**
 * `npm run bench -- websocket`: events per second fanned out to 1,000 subscribers, and request/answer
 * over a socket against HTTP, in the same run, on the shared anvil and Nodegate (bench/bench-targets.ts).
 *
 * Fan-out: the client process (bench/websocket-client.ts, its own process) opens SOCKETS WebSockets with
 * PER_SOCKET newHeads subscriptions each; this process then mines BLOCKS blocks on anvil directly (evm_mine, one
 * every 1/BLOCKS_PER_SECOND s, so the number of blocks is known) and waits until every notification has come or
 * none came for GRACE_MS; then BURST blocks back to back, which Nodegate hears of as anvil pushes them and fans out one
 * after the other: the rate of that round, from the first notification read to the last, is what the fan-out
 * keeps up with when it is the bottleneck. Each round reports notifications delivered / expected, the rate they
 * were delivered at, Nodegate's CPU per notification (/proc; its idle CPU, with and without the sockets open, is
 * given apart), duplicates, gaps and blocks out of order in any subscription's sequence, and latency from the moment evm_mine answered to the moment the client read the notification (one clock:
 * performance.timeOrigin + now() in both processes). Nodegate learns of a block from anvil's own push (its newHeads
 * over upstreams[].ws, docs/websocket.md "When a head arrives"); the spread of one block's notifications (first
 * subscriber to last) is the fan-out's own time.
 *
 * Request/answer: from the same client process, eth_blockNumber and eth_getBalance (a distinct address per
 * request) with IN_FLIGHT requests in flight: over one WebSocket (pipelined, matched by id) and over IN_FLIGHT
 * HTTP keep-alive connections (undici, one request each), to anvil and to Nodegate. One generator for both
 * transports, so the ws/http ratio compares the transports, not two load generators.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchTargets } from './bench-targets.ts';
import { printTable } from './rpc-throughput.ts';
import { cpuMicros, post, type Target } from './targets.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SOCKETS = 100;
const PER_SOCKET = 10;
const BLOCKS_PER_SECOND = 10;
const BLOCKS = 100;
/** Then this many back to back: what the fan-out keeps up with when it is the bottleneck. */
const BURST = 30;
/** Nodegate's idle CPU is measured over this long, before the sockets are opened and with them open. */
const IDLE_MS = 2000;
/** After the last block, how long without a new notification before the missing ones count as lost. */
const GRACE_MS = 3000;
const IN_FLIGHT = 32;
const WARMUP = 1;
const SECONDS = 4;
const WORKLOADS = ['eth_blockNumber', 'eth_getBalance'];

type Msg = Record<string, any>;
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchWebsocket(targets: BenchTargets): Promise<void> {
  const anvil = await targets.anvil();
  const nodegate = await targets.nodegate();
  const load0 = loadavg();
  const client = await startClient();
  try {
    await fanOut(client, anvil, nodegate);
    await requestAnswer(client, anvil, nodegate);
  } finally {
    client.child.disconnect();
  }
  console.log(`load average ${load0[0].toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end (2 cores shared by anvil, Nodegate, the client and other work)`);
}

interface Client {
  child: ChildProcess;
  /** Sends `m` and resolves with the next message of type `type` (an `error` message rejects). */
  ask(m: Msg | undefined, type: string, timeoutMs?: number): Promise<Msg>;
}

async function startClient(): Promise<Client> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/websocket-client.ts'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = (m: Msg | undefined, type: string, timeoutMs = 60_000) => new Promise<Msg>((res, rej) => {
    const t = setTimeout(() => done(new Error(`no ${type} from the client in ${timeoutMs} ms`)), timeoutMs);
    const on = (a: Msg) => {
      if (a.type === 'error') done(new Error(`client: ${a.message}`));
      else if (a.type === type) done(undefined, a);
    };
    const exit = () => done(new Error('the client exited'));
    const done = (err?: Error, a?: Msg) => {
      clearTimeout(t);
      child.off('message', on);
      child.off('exit', exit);
      if (err) rej(err); else res(a!);
    };
    child.on('message', on);
    child.once('exit', exit);
    if (m) child.send(m);
  });
  await ask(undefined, 'ready');
  return { child, ask };
}

async function fanOut(client: Client, anvil: Target, nodegate: Target): Promise<void> {
  // Idle, before any socket: the head checks and the rest of the process's own timers.
  const idle = async () => {
    const c0 = cpuMicros(nodegate.pid);
    await sleep(IDLE_MS);
    return ((cpuMicros(nodegate.pid) ?? NaN) - (c0 ?? NaN)) / (IDLE_MS / 1000);
  };
  const idleBare = await idle();
  const wsUrl = nodegate.url.replace(/^http/, 'ws');
  const sub = await client.ask({ type: 'subscribe', url: wsUrl, sockets: SOCKETS, perSocket: PER_SOCKET }, 'subscribed');
  const subscribers: number = sub.subscriptions;
  // Idle with the sockets open: their key re-checks and pings, no block.
  const idleOpen = await idle();

  const rows = [
    await fanOutRound(client, anvil, nodegate, subscribers, `steady, ${BLOCKS_PER_SECOND} blocks/s`, BLOCKS, BLOCKS_PER_SECOND),
    await fanOutRound(client, anvil, nodegate, subscribers, `burst of ${BURST} blocks`, BURST, undefined),
  ];
  await client.ask({ type: 'close' }, 'closed');

  console.log(`\nWebSocket fan-out: ${SOCKETS} sockets × ${PER_SOCKET} newHeads subscriptions = ${subscribers} subscribers (${sub.failed} refused); `
    + `blocks mined on anvil by evm_mine: ${BLOCKS} at ${BLOCKS_PER_SECOND} per second (${(BLOCKS_PER_SECOND * subscribers).toLocaleString('en-US')} notifications/s offered), `
    + `then ${BURST} back to back; Nodegate idle: ${Math.round(idleBare / 1000)} ms of CPU per second without sockets, ${Math.round(idleOpen / 1000)} with them open`);
  printTable(
    ['round', 'blocks', 'delivered / expected', 'events/s', 'Nodegate cpu µs/event', 'µs/block', 'latency p50', 'p99', 'max', 'spread p50', 'p99', 'client cpu µs/event'],
    rows.map((r) => r.cols),
  );
  for (const r of rows) if (r.odd.length) console.log(`NOT AS EXPECTED (${r.cols[0]}): ${r.odd.join(', ')}`);
  console.log('events/s: notifications read by the client over the time from the first evm_mine (steady; from the first notification read: burst)');
  console.log('to the last notification read; cpu: Nodegate\'s process (/proc) over the same time, idle cost included; latency (ms): evm_mine answered →');
  console.log('the client read the notification (Nodegate hears of each block from anvil\'s push, upstreams[].ws) and the blocks pushed before it');
  console.log('were fanned out; spread (ms): one block\'s first notification read → its last, the fan-out itself.');
}

/** Mines `blocks` blocks, `rate` per second (undefined: back to back), and waits for their notifications. */
async function fanOutRound(client: Client, anvil: Target, nodegate: Target, subscribers: number, name: string, blocks: number, rate: number | undefined) {
  const first = Number((await post(anvil.url, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}')).result);
  const mined = new Map<number, number>();
  const cpu0 = cpuMicros(nodegate.pid);
  const clientCpu0 = cpuMicros(client.child.pid!);
  const t0 = now();
  for (let k = 1; k <= blocks; k++) {
    const a = await post(anvil.url, '{"jsonrpc":"2.0","id":1,"method":"evm_mine","params":[]}');
    if (a.error) throw new Error(`evm_mine: ${JSON.stringify(a.error)}`);
    mined.set(first + k, now());
    const wait = rate === undefined ? 0 : t0 + (k * 1000) / rate - now();
    if (wait > 0) await sleep(wait);
  }
  const last = Number((await post(anvil.url, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}')).result);
  const expected = blocks * subscribers;
  let delivered = 0;
  let changed = now();
  let cpuUs = NaN, clientCpuUs = NaN;
  while (delivered < expected && now() - changed < GRACE_MS) {
    await sleep(100);
    const c = (await client.ask({ type: 'count' }, 'count')).delivered;
    if (c !== delivered) {
      delivered = c;
      changed = now();
      // The CPU up to the last notification (to 100 ms), not the grace period's idle time after it.
      cpuUs = (cpuMicros(nodegate.pid) ?? NaN) - (cpu0 ?? NaN);
      clientCpuUs = (cpuMicros(client.child.pid!) ?? NaN) - (clientCpu0 ?? NaN);
    }
  }
  const r = await client.ask({ type: 'report' }, 'report');

  const latencies: number[] = [];
  const spreads: number[] = [];
  let tFirst = Infinity, tLast = -Infinity;
  let foreign = 0;
  for (const [n, ts] of Object.entries(r.blocks as Record<string, number[]>)) {
    const m = mined.get(Number(n));
    if (m === undefined) { foreign += ts.length; continue; }
    let lo = Infinity, hi = -Infinity;
    for (const t of ts) { latencies.push(t - m); lo = Math.min(lo, t); hi = Math.max(hi, t); }
    spreads.push(hi - lo);
    tFirst = Math.min(tFirst, lo);
    tLast = Math.max(tLast, hi);
  }
  const ms = (x: number) => x.toFixed(1);
  const eventsPerSecond = latencies.length / ((tLast - (rate === undefined ? tFirst : t0)) / 1000);
  const odd = [
    r.duplicates && `${r.duplicates} duplicates`, r.outOfOrder && `${r.outOfOrder} out of order`, r.gaps && `${r.gaps} skipped in a subscription's sequence`,
    foreign && `${foreign} of blocks this round did not mine`, r.subscriptions !== subscribers && `${r.subscriptions} subscriptions heard of (of ${subscribers})`,
    last - first !== blocks && `anvil went from block ${first} to ${last} for ${blocks} evm_mine`,
  ].filter((x): x is string => Boolean(x));
  const cols = [
    name,
    String(blocks),
    `${latencies.length.toLocaleString('en-US')} / ${expected.toLocaleString('en-US')}`,
    Math.round(eventsPerSecond).toLocaleString('en-US'),
    (cpuUs / latencies.length).toFixed(1),
    Math.round(cpuUs / blocks).toLocaleString('en-US'),
    ms(pct(latencies, 0.5)), ms(pct(latencies, 0.99)), ms(latencies.reduce((a, b) => Math.max(a, b), -Infinity)),
    ms(pct(spreads, 0.5)), ms(pct(spreads, 0.99)),
    (clientCpuUs / latencies.length).toFixed(1),
  ];
  return { cols, odd };
}

async function requestAnswer(client: Client, anvil: Target, nodegate: Target): Promise<void> {
  interface Cell { rps: number; p50: number; p99: number; failed: number; cpu: number; clientCpu: number }
  const measure = async (t: Target, transport: 'http' | 'ws', workload: string): Promise<Cell> => {
    const url = transport === 'ws' ? t.url.replace(/^http/, 'ws') : t.url;
    const measuring = client.ask(undefined, 'measuring');
    const loaded = client.ask({ type: 'load', transport, url, workload, warmup: WARMUP, seconds: SECONDS, inFlight: IN_FLIGHT }, 'loaded');
    loaded.catch(() => {}); // awaited below; an early failure surfaces through `measuring`
    await measuring;
    const c0 = cpuMicros(t.pid), k0 = cpuMicros(client.child.pid!);
    const r = await loaded;
    const c1 = cpuMicros(t.pid), k1 = cpuMicros(client.child.pid!);
    return { rps: r.requests / r.seconds, p50: r.p50, p99: r.p99, failed: r.failed, cpu: ((c1 ?? NaN) - (c0 ?? NaN)) / r.requests, clientCpu: ((k1 ?? NaN) - (k0 ?? NaN)) / r.requests };
  };
  const rows: string[][] = [];
  for (const workload of WORKLOADS) {
    const cells: Record<string, Cell> = {};
    for (const t of [anvil, nodegate]) for (const tr of ['http', 'ws'] as const) cells[`${t.name} ${tr}`] = await measure(t, tr, workload);
    for (const tr of ['http', 'ws'] as const) {
      const a = cells[`${anvil.name} ${tr}`], n = cells[`${nodegate.name} ${tr}`];
      const nh = cells[`${nodegate.name} http`], ah = cells[`${anvil.name} http`];
      const rps = (c: Cell) => Math.round(c.rps).toLocaleString('en-US') + (c.failed ? ` (${c.failed} failed)` : '');
      rows.push([
        `${workload}, ${tr === 'ws' ? 'WebSocket' : 'HTTP'}`,
        rps(a), a.p50.toFixed(1), a.p99.toFixed(1), a.cpu.toFixed(0),
        rps(n), n.p50.toFixed(1), n.p99.toFixed(1), `${(n.rps / a.rps).toFixed(2)}x`, n.cpu.toFixed(0), n.clientCpu.toFixed(0),
        tr === 'ws' ? `${(a.rps / ah.rps).toFixed(2)}x` : '', tr === 'ws' ? `${(n.rps / nh.rps).toFixed(2)}x` : '', tr === 'ws' ? `${(n.cpu / nh.cpu).toFixed(2)}x` : '',
      ]);
    }
  }
  console.log(`\nWebSocket request/answer: ${IN_FLIGHT} requests in flight (one WebSocket, pipelined; or ${IN_FLIGHT} HTTP keep-alive connections), `
    + `${SECONDS} s per cell after ${WARMUP} s of warm-up, one client process (bench/websocket-client.ts: ws, undici)`);
  printTable(
    ['workload', 'anvil req/s', 'p50', 'p99', 'cpu µs', 'Nodegate req/s', 'p50', 'p99', '× anvil', 'cpu µs', 'client µs', 'anvil ws/http', 'Nodegate ws/http', 'cpu ws/http'],
    rows,
  );
  console.log('p50/p99 in ms (the client); cpu µs: CPU time of the target process per request (anvil: all its threads), client µs: the client process\'s');
  console.log('CPU per request to Nodegate; eth_getBalance: a distinct address per request; ws/http: req/s of the WebSocket row over the HTTP row, and');
  console.log('Nodegate\'s CPU per request over WebSocket over the same over HTTP.');
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN;
}
