/**
 * `npm run soak [-- NAME...]`: the traffic mix below, then the load-sized tests (bench/soak-tests.ts: the suite's
 * fuzz, webhooks, outbox and heavy-events tests at their full size); NAME picks those whose name contains it
 * (`npm run soak -- traffic`, `npm run soak -- fuzz webhooks`). Exits 1 when any of them failed.
 *
 * `traffic`: a Nodegate child process (embedded chains) under mixed traffic for SOAK_SECONDS (default 600):
 * valid calls and batches, transactions, filters, invalid bodies and params, unknown methods, a key over its
 * plan's per-second limit, unknown keys, wrong networks and content types, bodies over the limit. Prints what was
 * served, the answers by kind (HTTP status, JSON-RPC code, data.reason), and the gateway's memory (RSS, and heap
 * after a GC, read through the inspector) and open file descriptors, after a warm-up and at the end.
 * Exits 1 on a 5xx, a connection error, a malformed answer or a dead gateway. Not run in CI.
 * SOAK_SECONDS=120 npm run soak -- traffic; SOAK_WORKERS (default 8); SOAK_CACHE_BYTES (default: cache.maxBytes, 64 MiB).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request, WebSocket } from 'undici';
import { startNodegate, type NodegateProcess } from '../test/helpers/process.ts';
import { runSoakTest, SOAK_TESTS } from './soak-tests.ts';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const WORKERS = Number(process.env.SOAK_WORKERS ?? 8);
const WARMUP_MS = Math.min(15_000, SECONDS * 100);
const A0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const dispatcher = new Agent({ connections: WORKERS + 4, keepAliveTimeout: 10_000 });

/** A soak-only plan the limited key is on: a few requests a second, so it meets 429 all the time. */
const CONFIG = {
  plans: {
    soak: { name: 'Soak', cuPerSecond: 100_000_000, cuPerMonth: 1e15, maxBatchSize: 100, debugMethods: true, maxFilters: 1000 },
    tiny: { name: 'Tiny', cuPerSecond: 50, cuPerMonth: 1e15, maxBatchSize: 10 },
  },
  accounts: { defaultPlan: 'soak' },
  // The unknown keys below stay under this, so the per-IP guard does not refuse the valid keys too.
  limits: { unknownKeys: { perSecond: 50, burst: 100 } },
  log: { level: 'warn' },
  // The response cache keeps up to this many bytes of answers (the soak's web3_sha3 of random input are kept for
  // ever), so the heap grows until the cache is full; a small SOAK_CACHE_BYTES shows where that stops.
  ...(process.env.SOAK_CACHE_BYTES ? { cache: { maxBytes: Number(process.env.SOAK_CACHE_BYTES) } } : {}),
};

/** The gateway's heap after a full GC, through the inspector (the child runs with --inspect on a random port). */
async function heapAfterGc(ng: NodegateProcess): Promise<number> {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(ng.output())?.[1];
  if (!url) throw new Error('no inspector URL in the output');
  const ws = new WebSocket(url);
  await new Promise((res, rej) => { ws.onopen = res; ws.onerror = rej; });
  let next = 1;
  const call = (method: string) => new Promise<any>((res) => {
    const id = next++;
    ws.addEventListener('message', function on(ev: Event) {
      const msg = JSON.parse(String((ev as MessageEvent).data));
      if (msg.id === id) { ws.removeEventListener('message', on); res(msg.result); }
    });
    ws.send(JSON.stringify({ id, method }));
  });
  await call('HeapProfiler.collectGarbage');
  await call('HeapProfiler.collectGarbage');
  const { usedSize } = await call('Runtime.getHeapUsage');
  ws.close();
  return usedSize;
}

function processFigures(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { rss: rssKb * 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
}

const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MB`;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];
const call = (method: string, params: unknown[] = [], id: unknown = Math.floor(Math.random() * 1e6)) => ({ jsonrpc: '2.0', id, method, params });
const randomAddress = () => '0x' + Array.from({ length: 40 }, () => pick([...'0123456789abcdef'])).join('');

/** `oversized`: over the body limit; the gateway answers 413 and closes the connection without reading the rest. */
interface Shot { path: string; body: string; type?: string; oversized?: boolean }

/** The traffic mix: [weight, what to send]. */
function mix(key: string, tinyKey: string): Array<[number, () => Shot]> {
  const ok = (body: unknown, net = 'mainnet'): Shot => ({ path: `/v1/${net}/${key}`, body: JSON.stringify(body) });
  const reads = () => pick([
    call('eth_blockNumber'), call('eth_chainId'), call('eth_gasPrice'), call('eth_getBalance', [randomAddress(), 'latest']),
    call('eth_getBlockByNumber', ['latest', false]), call('eth_call', [{ to: randomAddress(), data: '0x' }, 'latest']),
    call('eth_getTransactionCount', [A0, 'pending']), call('eth_getLogs', [{ fromBlock: 'latest', toBlock: 'latest' }]),
    call('eth_feeHistory', ['0x4', 'latest', [50]]), call('web3_sha3', ['0x' + 'ab'.repeat(Math.floor(Math.random() * 64))]),
  ]);
  return [
    [40, () => ok(reads(), pick(['mainnet', 'testnet']))],
    [10, () => ok(Array.from({ length: 2 + Math.floor(Math.random() * 40) }, reads))],
    [1, () => ok(call('eth_sendTransaction', [{ from: A0, to: randomAddress(), value: '0x1' }]))],
    [3, () => ok(pick([call('eth_newBlockFilter'), call('eth_getFilterChanges', ['0x1']), call('eth_uninstallFilter', ['0x2'])]))],
    [8, () => ok(pick([call('eth_getBalance', ['0x1234', 'latest']), call('eth_getBlockByNumber', [{}, 1]), call('eth_call', [])]))],
    [4, () => ok(pick([call('getBalance'), call('eth_foo'), call('anvil_mine')]))],
    [6, () => ({ path: `/v1/mainnet/${key}`, body: pick(['{"jsonrpc":"2.0",', '', '[]', '[1,2]', '{"id":1}', 'null', '{"jsonrpc":"1.0","id":1,"method":"eth_chainId"}']) })],
    [10, () => ({ path: `/v1/mainnet/${tinyKey}`, body: JSON.stringify(pick([reads(), Array.from({ length: 5 }, reads)])) })],
    [1, () => ({ path: `/v1/mainnet/ngk_${Array.from({ length: 43 }, () => pick([...'abcXYZ0123'])).join('')}`, body: JSON.stringify(reads()) })],
    [2, () => ({ path: `/v1/goerli/${key}`, body: JSON.stringify(reads()) })],
    [2, () => ({ path: `/v1/mainnet/${key}`, body: JSON.stringify(reads()), type: 'text/plain' })],
    [1, () => ({ ...ok(call('web3_sha3', ['0x' + 'ab'.repeat(600_000)])), oversized: true })],
  ];
}

/** How an answer is counted: `200 result`, `429 -32005 limit_exceeded`, `200 batch`, `204`... */
function kindOf(status: number, text: string): { kind: string; malformed?: boolean } {
  if (status === 204) return { kind: '204 notification' };
  let a: any;
  try { a = JSON.parse(text); } catch { return { kind: `${status} not JSON`, malformed: true }; }
  if (Array.isArray(a)) return { kind: `${status} batch` };
  if (a?.jsonrpc !== '2.0' || !('id' in a)) return { kind: `${status} malformed`, malformed: true };
  if (a.error) return { kind: `${status} ${a.error.code} ${a.error.data?.reason ?? '(node)'}` };
  return { kind: `${status} result` };
}

async function main() {
  console.log(`soak: ${SECONDS} s of mixed traffic, ${WORKERS} workers, against a Nodegate child process`);
  const ng = await startNodegate({ config: CONFIG, env: { NODE_OPTIONS: '--inspect=127.0.0.1:0', NODEGATE_LOG_LEVEL: 'warn' }, timeoutMs: 120_000 });
  // Interrupted: the gateway runs in its own process group, so it would outlive the soak; stop it (and its chains).
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => void ng.stop('SIGTERM').finally(() => process.exit(130)));
  }
  const cliEnv = { ...process.env, NODEGATE_DATA_DIR: ng.dataDir, NODEGATE_CONFIG: join(ng.dataDir, 'test-config.json') };
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args, '--json'], { env: cliEnv, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`nodegate ${args.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  cli('accounts', 'create', '--name', 'Tiny', '--email', 'tiny@soak.local', '--plan', 'tiny');
  const tinyKey: string = cli('keys', 'create', '--name', 'limited', '--account', 'tiny@soak.local').value;
  const shots = mix(ng.key, tinyKey);
  const total = shots.reduce((n, [w]) => n + w, 0);
  const nextShot = () => {
    let r = Math.random() * total;
    for (const [w, f] of shots) if ((r -= w) < 0) return f();
    return shots[0][1]();
  };

  const kinds = new Map<string, number>();
  const problems: string[] = [];
  let served = 0;
  let failures = 0;
  let batchItems = 0;
  let stopping = false;
  const count = (k: string, n = 1) => kinds.set(k, (kinds.get(k) ?? 0) + n);
  const worker = async () => {
    while (!stopping) {
      const s = nextShot();
      try {
        const res = await request(ng.url + s.path, {
          method: 'POST', body: s.body, headers: { 'content-type': s.type ?? 'application/json' }, dispatcher,
          headersTimeout: 60_000, bodyTimeout: 60_000,
        });
        const text = await res.body.text();
        served++;
        const { kind, malformed } = kindOf(res.statusCode, text);
        count(kind);
        if (kind.endsWith('batch')) batchItems += JSON.parse(text).length;
        if (malformed || res.statusCode >= 500) {
          failures++;
          if (problems.length < 20) problems.push(`${kind}: ${text.slice(0, 200)}`);
        }
      } catch (err) {
        const code = (err as { code?: string }).code;
        // The gateway closes after a 413 rather than read a body it refuses; a client still writing then sees
        // the socket close under it (EPIPE/reset) instead of the 413. That is the refusal, not a failure.
        if (s.oversized && (code === 'EPIPE' || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET')) {
          served++;
          count(`413 refused: connection closed while the client still sent (${code})`);
          continue;
        }
        failures++;
        count(`connection error ${code ?? (err as Error).message}`);
        if (problems.length < 20) problems.push(`connection error: ${(err as Error).message}`);
      }
    }
  };

  const t0 = Date.now();
  const workers = Array.from({ length: WORKERS }, worker);
  await new Promise((r) => setTimeout(r, WARMUP_MS));
  const before = { ...processFigures(ng.pid), heap: await heapAfterGc(ng), served, at: Date.now() - t0 };
  console.log(`after ${(before.at / 1000).toFixed(0)} s of warm-up: rss ${mb(before.rss)}, heap ${mb(before.heap)} (after GC), ${before.fds} fds`);
  const progress = setInterval(() => {
    const f = processFigures(ng.pid);
    const s = (Date.now() - t0) / 1000;
    console.log(`  ${s.toFixed(0).padStart(4)} s  ${served} served (${Math.round(served / s)}/s)  rss ${mb(f.rss)}  ${f.fds} fds`);
  }, Math.max(10_000, SECONDS * 50));
  await new Promise((r) => setTimeout(r, Math.max(0, SECONDS * 1000 - (Date.now() - t0))));
  stopping = true;
  await Promise.all(workers);
  clearInterval(progress);
  const elapsed = (Date.now() - t0) / 1000;
  await new Promise((r) => setTimeout(r, 1000));
  const after = { ...processFigures(ng.pid), heap: await heapAfterGc(ng) };
  const alive = (await request(`${ng.url}/healthz`, { dispatcher }).then((r) => r.statusCode).catch(() => 0)) === 200;

  console.log(`\n${served} requests served in ${elapsed.toFixed(0)} s (${Math.round(served / elapsed)}/s), ${batchItems} batch items; answers by kind:`);
  for (const [k, n] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(8)}  ${k}`);
  const delta = (a: number, b: number) => `${b >= a ? '+' : ''}${mb(b - a)}`;
  console.log(`\n                 after warm-up    at the end     change`);
  console.log(`  rss            ${mb(before.rss).padStart(12)}  ${mb(after.rss).padStart(12)}  ${delta(before.rss, after.rss).padStart(10)}`);
  console.log(`  heap (GC'd)    ${mb(before.heap).padStart(12)}  ${mb(after.heap).padStart(12)}  ${delta(before.heap, after.heap).padStart(10)}`);
  console.log(`  fds            ${String(before.fds).padStart(12)}  ${String(after.fds).padStart(12)}  ${String(after.fds - before.fds).padStart(10)}`);
  console.log(`  (${served - before.served} requests between the two measurements)`);
  await dispatcher.close();
  const stopped = await ng.stop('SIGTERM');
  const ok = alive && failures === 0 && stopped.code === 0;
  console.log(`\n${ok ? 'OK' : 'FAILED'}: gateway ${alive ? 'alive' : 'DEAD'} at the end, stopped with ${stopped.code ?? stopped.signal} in ${stopped.ms} ms; ${failures} failures (5xx, malformed, connection errors)${problems.length ? ':\n  ' + problems.join('\n  ') : ''}`);
  return ok;
}

const wanted = process.argv.slice(2);
const picked = (name: string) => wanted.length === 0 || wanted.some((w) => name.includes(w));
const known = ['traffic', ...Object.keys(SOAK_TESTS)];
if (!known.some(picked)) {
  console.error(`no soak named ${wanted.join(', ')} (known: ${known.join(', ')})`);
  process.exit(2);
}
let allOk = true;
if (picked('traffic')) allOk = (await main()) && allOk;
for (const name of Object.keys(SOAK_TESTS)) if (picked(name)) allOk = runSoakTest(name) && allOk;
process.exit(allOk ? 0 : 1);
