/**
 * What the RPC benchmarks measure, each a separate process on this machine: anvil itself, the bare reference
 * proxy in front of it, and Nodegate in front of it (network upstream = the same anvil URL; authentication,
 * validation and, unless told otherwise, limits on). Started once per `npm run bench`, stopped at the end.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { anvilBinaryPath } from '../src/upstream/embedded/anvil-binary.ts';
import { freePort, startNodegate, type NodegateProcess } from '../test/helpers/process.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** anvil's development mnemonic: its accounts are funded with 10,000 ETH each. */
export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
/** Dev accounts anvil funds: enough for each target to send transactions from its own accounts (no nonce clashes). */
export const DEV_ACCOUNTS = 40;
export const CHAIN_ID = 31337;

/** A URL to POST JSON-RPC bodies to. */
export interface Target {
  name: string;
  url: string;
  /** The process serving `url`. */
  pid: number;
  stop(): Promise<void>;
}

/** anvil on a free port, spawned directly (not through npx), silent. */
export async function startAnvil(): Promise<Target> {
  const port = await freePort();
  const child = spawn(anvilBinaryPath(), [
    '--host', '127.0.0.1', '--port', String(port), '--silent',
    '--accounts', String(DEV_ACCOUNTS), '--mnemonic', DEV_MNEMONIC, '--chain-id', String(CHAIN_ID),
  ], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}/`;
  await waitAnswers(url, child);
  return { name: 'anvil', url, pid: child.pid!, stop: () => stopChild(child) };
}

/** bench/bare-proxy.ts as a child process, in front of `upstream`. */
export function startBareProxy(upstream: string, wrap: string[] = []): Promise<Target> {
  return startScript('bare proxy', 'bench/bare-proxy.ts', [upstream], wrap);
}

/** bench/bare-ws-proxy.ts as a child process, in front of `upstream` (its WebSocket endpoint). */
export function startBareWsProxy(upstream: string, wrap: string[] = []): Promise<Target> {
  return startScript('bare ws proxy', 'bench/bare-ws-proxy.ts', [upstream], wrap);
}

/** bench/floor.ts as a child process: node:http answering from memory (the floor); with a cache hit's headers. */
export function startFloor(withHeaders = false, wrap: string[] = [], raw = false): Promise<Target> {
  if (raw) return startScript('floor, head made whole', 'bench/floor.ts', ['raw'], wrap);
  return startScript(withHeaders ? 'floor with headers' : 'floor', 'bench/floor.ts', withHeaders ? ['headers'] : [], wrap);
}

/** A bench script that prints "listening on PORT", as a child process, answering before it is returned. */
async function startScript(name: string, file: string, args: string[], wrap: string[] = []): Promise<Target> {
  const argv = [...wrap, process.execPath, '--import', 'tsx', file, ...args];
  const child = spawn(argv[0], argv.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((res, rej) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /listening on (\d+)/.exec(out);
      if (m) res(Number(m[1]));
    });
    child.once('exit', () => rej(new Error(`${name} exited: ${out}`)));
  });
  const url = `http://127.0.0.1:${port}/`;
  await waitAnswers(url, child);
  return { name, url, pid: child.pid!, stop: () => stopChild(child) };
}

/**
 * The plan's WebSocket subscription caps, high enough for the fan-out's 1,000 subscribers on one key; left out for
 * another checkout (bench/compare.ts), whose configuration may not know them.
 */
const socketLimits = (root: string | undefined) => (root ? {} : { subscriptionsPerKey: 100_000, subscriptionsPerAccount: 100_000 });

/**
 * Nodegate as users run it (`nodegate start`, a child process, default log level), its one network pointed at
 * `upstream`, the demo key on a plan too generous to limit; `root`: another checkout to run (bench/compare.ts), from
 * its source, or from `build` (its scripts/build.mjs output). `limits: false` sets `limits.enabled: false`; the
 * response cache is off unless `cache: true`, so that "uncached" means what it says.
 */
export async function startNodegateTarget(upstream: string, opts: { limits?: boolean; cache?: boolean; analytics?: boolean; tracing?: { sampleRatio: number; otlpUrl: string; followCallerSampled?: boolean }; root?: string; build?: string; name?: string; workers?: number; wrap?: string[]; ws?: boolean } = {}): Promise<Target & { proc: NodegateProcess }> {
  const proc = await startNodegate({
    cwd: opts.root,
    build: opts.build,
    wrap: opts.wrap,
    // Under valgrind (bench/instructions.ts) Nodegate starts some 30 times slower; with workers, three processes
    // start on the machine's two cores, and the banner waits for every worker.
    timeoutMs: opts.wrap ? 600_000 : opts.workers ? 180_000 : undefined,
    // Limits in the process's memory, the store in SQLite: a single instance (empty values are ignored).
    env: { REDIS_URL: '', DATABASE_URL: '', NODEGATE_LOG_LEVEL: '', NODEGATE_WORKERS: opts.workers ? String(opts.workers) : '' },
    config: {
      // anvil answers WebSocket on its HTTP port: configured as an operator would (upstreams[].ws), so that light
      // reads go over it, as they do to the embedded chain (an older checkout, `root`, may not know the field).
      networks: { mainnet: opts.root || opts.ws === false ? { chainId: CHAIN_ID, upstream } : { chainId: CHAIN_ID, upstreams: [{ url: upstream, ws: upstream.replace(/^http/, 'ws') }] } },
      plans: { bench: { name: 'Bench', cuPerSecond: 1_000_000_000, cuPerMonth: 1_000_000_000_000_000, maxBatchSize: 1000, debugMethods: true, maxFilters: 100, ...socketLimits(opts.root) } },
      // A socket's message rate (default 1,000/s) would cap the WebSocket request/answer measure: off, as the plan's.
      ...(opts.root ? {} : { ws: { messagesPerSecond: 1_000_000, messageBurst: 1_000_000 } }),
      accounts: { defaultPlan: 'bench' },
      limits: { enabled: opts.limits !== false },
      cache: { enabled: opts.cache === true },
      analytics: { enabled: opts.analytics !== false },
      metrics: { enabled: opts.analytics !== false },
      ...(opts.tracing ? { tracing: { enabled: true, ...opts.tracing } } : {}),
    },
  });
  const name = opts.name ?? (opts.tracing ? 'Nodegate, traced' : opts.cache ? 'Nodegate cached' : opts.limits === false ? 'Nodegate, limits off' : opts.analytics === false ? 'Nodegate, analytics off' : 'Nodegate');
  const url = proc.rpcUrl('mainnet');
  await waitAnswers(url, proc.child);
  return {
    name, url, proc, pid: proc.pid,
    async stop() {
      await proc.stop('SIGTERM');
      rmSync(proc.dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * CPU time of a server that forks a process per connection (PostgreSQL's postmaster), µs, from /proc (Linux): its own,
 * its children's that it has reaped (cutime, cstime: a backend that ended), and each live child's.
 */
export function forkingServerCpuMicros(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    const own = (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10_000;
    const children = readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    return children.reduce((sum, c) => sum + (cpuMicros(c) ?? 0), own);
  } catch {
    return undefined;
  }
}

/**
 * CPU time of a process and its children (a `--workers N` primary and its workers), µs, from /proc (Linux): the
 * children are listed by /proc/PID/task/TID/children.
 */
export function treeCpuMicros(pid: number): number | undefined {
  const own = cpuMicros(pid);
  if (own === undefined) return undefined;
  let children: number[] = [];
  try {
    children = readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
  } catch {
    return own;
  }
  return children.reduce((sum, c) => sum + (treeCpuMicros(c) ?? 0), own);
}

/** anvil's version line, for the table's heading. */
export function anvilVersion(): string {
  return /anvil Version: (\S+)/.exec(spawnSync(anvilBinaryPath(), ['--version'], { encoding: 'utf8' }).stdout)?.[1] ?? 'unknown';
}

/**
 * CPU time a process (all its threads) has used so far, µs, from /proc (Linux; undefined elsewhere). A target's
 * CPU per request varies far less than its throughput on a machine shared with other work.
 */
export function cpuMicros(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000; // utime + stime, in clock ticks of 10 ms (USER_HZ 100)
  } catch {
    return undefined;
  }
}

/**
 * CPU time of a process's main thread (a Node.js process's JavaScript thread), µs, user and kernel apart, from /proc
 * (Linux; undefined elsewhere): whether a process is held back by its one thread of JavaScript, and by what.
 */
export function mainThreadMicros(pid: number): { user: number; kernel: number } | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { user: Number(fields[11]) * 10_000, kernel: Number(fields[12]) * 10_000 };
  } catch {
    return undefined;
  }
}

/** Posts one body and returns the parsed answer. */
export async function post(url: string, body: string): Promise<any> {
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode} from ${url}: ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

async function waitAnswers(url: string, child: ChildProcess): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited (${child.exitCode})`);
    try {
      const a = await post(url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');
      if (a.result) return;
    } catch (err) {
      if (Date.now() > until) throw err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(t);
}
