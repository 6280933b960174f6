import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, so the CLI is started the same way whatever the test runner's working directory. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The arguments to `node` that run the `nodegate` CLI of this checkout (the command's own arguments follow): the
 * build scripts/run-tests.mjs makes before the e2e group, named by NODEGATE_TEST_BUILD (it starts in about half the
 * time: no TypeScript loader), or src/cli/main.ts through tsx when a test file is run alone. Absolute paths: any cwd.
 */
export function cliCommand(): string[] {
  const build = process.env.NODEGATE_TEST_BUILD;
  return [...START_NODE_FLAGS, ...(build ? [join(build, 'cli', 'main.js')] : ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts')])];
}

/**
 * The flags `npm start` gives node (package.json's start script: `node FLAGS bin/nodegate.mjs start`), so that the
 * tests and the benchmarks run Nodegate as the quick start does (the young generation's size: docs/deployment.md).
 */
export const START_NODE_FLAGS: readonly string[] = (() => {
  const start = String(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start);
  const m = /^node((?: --[\w-]+=\S+)*) bin\/nodegate\.mjs start$/.exec(start);
  if (!m) throw new Error(`package.json's start script is not "node [--flag=value...] bin/nodegate.mjs start": ${start}`);
  return m[1].trim().split(' ').filter(Boolean);
})();

/**
 * Nodegate as a real child process (`node <cliCommand()> start`), for tests that need what an
 * in-process gateway cannot show: signals, SIGKILL, restarts on the same data directory, stray processes.
 */
export interface NodegateProcess {
  child: ChildProcess;
  pid: number;
  /** `http://127.0.0.1:PORT`, parsed from the banner. */
  url: string;
  /** The demo key: parsed from the banner on first start, carried over on restarts. */
  key: string;
  dataDir: string;
  /** Milliseconds from spawn to the banner. */
  startMs: number;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  /** The pino lines printed so far, parsed. */
  logs(): Array<Record<string, any>>;
  rpcUrl(network?: string): string;
  /** One JSON-RPC call; throws on a JSON-RPC error (the error object is on `rpcError`). */
  call<T = any>(method: string, params?: unknown[], network?: string): Promise<T>;
  /** A JSON-RPC batch; returns the answers in request order. */
  batch(calls: Array<[string, unknown[]]>, network?: string): Promise<any[]>;
  /**
   * Sends `signal` (to Nodegate alone, or with `group` to its whole process group, as a terminal's Ctrl-C or a
   * service manager would) and resolves when it has exited.
   */
  stop(signal?: NodeJS.Signals, opts?: { group?: boolean; timeoutMs?: number }): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartOptions {
  /** Reuse a data directory (a restart); a fresh temporary one when absent. */
  dataDir?: string;
  /** The key from an earlier start on the same data directory (it is printed on first start only). */
  key?: string;
  /** Extra environment, e.g. NODEGATE_LOG_LEVEL. */
  env?: Record<string, string>;
  /** A configuration file's content (JSON is YAML), written into the data directory and named by NODEGATE_CONFIG. */
  config?: Record<string, unknown>;
  /** How long to wait for the banner. */
  timeoutMs?: number;
  /** The checkout whose `src/cli/main.ts` runs (bench/compare.ts starts another commit's worktree); this one when absent. */
  cwd?: string;
  /** A build of it (scripts/build.mjs's output directory) to run instead of its source: `npm run bench -- compare --built`. */
  build?: string;
  /** A command that runs node (bench/instructions.ts: `valgrind --tool=callgrind ...`); its pid is then the child's. */
  wrap?: string[];
  /** Flags of `nodegate start` itself, e.g. `['--workers', '2']`. */
  args?: string[];
}

const started = new Set<NodegateProcess>();

export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'nodegate-proc-'));
}

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}

/** Starts Nodegate on a free port and resolves once its banner is printed. */
export async function startNodegate(opts: StartOptions = {}): Promise<NodegateProcess> {
  const dataDir = opts.dataDir ?? tempDataDir();
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.PORT;
  delete env.NODEGATE_CONFIG;
  // Port 0: Nodegate binds a free port itself and prints it in the banner. A port chosen here and bound by the
  // child later could be taken in between by another process (EADDRINUSE on a busy machine).
  Object.assign(env, { NODEGATE_DATA_DIR: dataDir, NODEGATE_PORT: '0', NODEGATE_HOST: '127.0.0.1' }, opts.env);
  if (opts.config) {
    const file = join(dataDir, 'test-config.json');
    writeFileSync(file, JSON.stringify(opts.config));
    env.NODEGATE_CONFIG = file;
  }
  const t0 = Date.now();
  // Its own process group, so a test can signal the group the way a terminal or a service manager does.
  // Another checkout (opts.cwd) has no build of ours: its own build when given one, else its source through tsx.
  const command = opts.build !== undefined ? [...START_NODE_FLAGS, join(opts.build, 'cli', 'main.js')] : opts.cwd === undefined ? cliCommand() : ['--import', 'tsx', 'src/cli/main.ts'];
  const argv = [...(opts.wrap ?? []), process.execPath, ...command, 'start', ...(opts.args ?? [])];
  const child = spawn(argv[0], argv.slice(1), {
    cwd: opts.cwd ?? ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => { text += s; });
  child.stderr!.setEncoding('utf8').on('data', (s: string) => { text += s; });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    child.once('exit', (code, signal) => res({ code, signal }));
  });

  const banner = await new Promise<{ url: string; key: string | undefined }>((res, rej) => {
    const timer = setTimeout(() => { cleanup(); rej(new Error(`no banner within ${opts.timeoutMs ?? 60_000} ms:\n${text}`)); }, opts.timeoutMs ?? 60_000);
    let grace: NodeJS.Timeout | undefined;
    const done = () => {
      cleanup();
      res({ url: /Nodegate listening on (http:\/\/\S+)/.exec(text)![1], key: /^\s+(ngk_\S+)\s*$/m.exec(text)?.[1] });
    };
    const check = () => {
      if (!/Nodegate listening on http:\/\/\S+/.test(text) || !/POST \S+\/v1\/\{network\}\/\{apikey\}\n/.test(text)) return;
      // The banner is one write, but a pipe may split it: on first start the key's block ends with the curl line.
      if (/Try it:\n[^\n]*curl[^\n]*\n/.test(text)) return done();
      grace ??= setTimeout(done, 500);
    };
    const onExit = () => { cleanup(); rej(new Error(`nodegate exited before its banner:\n${text}`)); };
    const cleanup = () => { clearTimeout(timer); clearTimeout(grace); child.stdout!.off('data', check); child.off('exit', onExit); };
    child.stdout!.on('data', check);
    child.once('exit', onExit);
  }).catch((err) => {
    try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ }
    throw err;
  });
  const startMs = Date.now() - t0;
  const key = banner.key ?? opts.key;
  if (!key) throw new Error('no key: the banner prints one on first start only; pass the key of the first start');

  const rpcUrl = (network = 'mainnet') => `${banner.url}/v1/${network}/${key}`;
  const post = async (body: unknown, network?: string) => {
    const res = await fetch(rpcUrl(network), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const raw = await res.text();
    try { return JSON.parse(raw); } catch { throw new Error(`HTTP ${res.status}: ${raw.slice(0, 300)}`); }
  };
  let nextId = 1;
  const proc: NodegateProcess = {
    child, pid: child.pid!, url: banner.url, key, dataDir, startMs, exited,
    output: () => text,
    logs: () => text.split('\n').filter((l) => l.startsWith('{')).flatMap((l) => { try { return [JSON.parse(l)]; } catch { return []; } }),
    rpcUrl,
    async call(method, params = [], network) {
      const a = await post({ jsonrpc: '2.0', id: nextId++, method, params }, network);
      if (a.error) throw Object.assign(new Error(`${method}: ${a.error.message}`), { rpcError: a.error });
      return a.result;
    },
    async batch(calls, network) {
      const first = nextId;
      nextId += calls.length;
      const answers = await post(calls.map(([method, params], i) => ({ jsonrpc: '2.0', id: first + i, method, params })), network);
      if (!Array.isArray(answers)) throw new Error(`batch: ${JSON.stringify(answers).slice(0, 300)}`);
      const byId = new Map(answers.map((a: any) => [a.id, a]));
      return calls.map((_, i) => byId.get(first + i));
    },
    async stop(signal = 'SIGTERM', o = {}) {
      const t = Date.now();
      if (child.exitCode === null && child.signalCode === null) {
        try { process.kill(o.group ? -child.pid! : child.pid!, signal); } catch { /* gone */ }
      }
      const timer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, o.timeoutMs ?? 30_000);
      const r = await exited;
      clearTimeout(timer);
      started.delete(proc);
      return { ...r, ms: Date.now() - t };
    },
  };
  started.add(proc);
  return proc;
}

/** What the supervisor records about a running anvil: `data/chains/{network}/anvil.pid`. */
export function readAnvilPid(dataDir: string, network = 'mainnet'): { pid: number; port: number } | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, 'chains', network, 'anvil.pid'), 'utf8'));
  } catch {
    return undefined;
  }
}

export interface ProcInfo { pid: number; ppid: number; state: string; cmdline: string[] }

/** Every anvil process on this machine (Linux /proc), zombies excluded. */
export function anvilProcesses(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const info = procInfo(Number(name));
    if (info && info.state !== 'Z' && /(^|\/)anvil$/.test(info.cmdline[0] ?? '')) out.push(info);
  }
  return out;
}

export function procInfo(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid ...; comm may hold spaces and parentheses, so split after the last ')'.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return { pid, ppid: Number(ppid), state, cmdline };
  } catch {
    return undefined;
  }
}

/** A process that exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  const info = procInfo(pid);
  return info !== undefined && info.state !== 'Z';
}

/**
 * For after() hooks: SIGKILLs every Nodegate still running, then the anvils their data directories name. Nodegate
 * first: until it is gone, one still starting (or restarting a chain) may spawn an anvil, in a process group of its
 * own, and names it in the pid file as it spawns it; the files are read once no further anvil can come.
 */
export async function killAll(): Promise<void> {
  for (const p of [...started]) {
    try { process.kill(-p.pid, 'SIGKILL'); } catch { /* gone */ }
    await p.exited;
    killAnvilsOf(p.dataDir);
    started.delete(p);
  }
}

/**
 * SIGKILLs every anvil of a data directory: those its pid files name, and those whose home is in it (each anvil runs
 * with HOME in `chains/{network}/anvil-home`). A Nodegate killed while it starts its chains can have spawned an
 * anvil it had not yet named; the next start cannot know of it, so a test that kills one there cleans up with this.
 */
export function killAnvilsOf(dataDir: string): void {
  const pids = new Set<number>();
  for (const net of ['mainnet', 'testnet']) {
    const rec = readAnvilPid(dataDir, net);
    if (rec && procInfo(rec.pid)?.cmdline[0]?.endsWith('anvil')) pids.add(rec.pid);
  }
  const home = `HOME=${join(dataDir, 'chains')}/`;
  for (const a of anvilProcesses()) {
    try {
      if (readFileSync(`/proc/${a.pid}/environ`, 'utf8').split('\0').some((e) => e.startsWith(home))) pids.add(a.pid);
    } catch { /* gone */ }
  }
  for (const pid of pids) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
