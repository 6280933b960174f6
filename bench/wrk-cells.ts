/**
 * One measured cell of the RPC benchmarks: a wrk run (native, its own process, 1 thread) of a Lua script from
 * bench/wrk-scripts.ts against a target, with the CPU time the target's process used per request (/proc).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpuMicros, type Target } from './targets.ts';

export interface Cell {
  /** HTTP requests per second. */
  rps: number;
  /** Latency percentiles, µs (wrk). */
  p50: number;
  p99: number;
  /** CPU the target's process used per request, µs (anvil: all its threads). */
  cpuUs: number | undefined;
  /** Socket errors, non-200 answers and JSON-RPC errors. */
  failed: number;
  requests: number;
}

/** A duration-bound cell: `seconds` of the script's requests. */
export async function measure(t: Target, script: string, seconds: number, connections: number): Promise<Cell> {
  const c0 = cpuMicros(t.pid);
  const r = await runWrk(t.url, script, seconds, connections);
  const c1 = cpuMicros(t.pid);
  return cellOf(t, r.requests, r.requests / (r.us / 1e6), r, c0, c1);
}

/** A send cell (wrk-scripts.ts `sendScript`): its transactions, timed by the script; CPU read at the last answer. */
export async function measureSends(t: Target, script: string, connections: number): Promise<Cell> {
  const c0 = cpuMicros(t.pid);
  let c1: number | undefined;
  let sent: { n: number; us: number; failed: number } | undefined;
  const r = await runWrk(t.url, script, 120, connections, (line, child) => {
    const m = /^SENT (\{.*\})$/.exec(line);
    if (!m) return;
    c1 = cpuMicros(t.pid);
    sent = JSON.parse(m[1]);
    child.kill('SIGINT');
  });
  if (!sent) throw new Error(`${t.name}: wrk ended before every transaction was answered`);
  return cellOf(t, sent.n, sent.n / (sent.us / 1e6), { ...r, failed: sent.failed }, c0, c1);
}

function cellOf(t: Target, n: number, rps: number, r: WrkResult, c0: number | undefined, c1: number | undefined): Cell {
  const failed = r.failed + r.socket;
  if (failed) console.error(`  ${t.name}: ${failed} of ${n} requests failed${r.kinds ? ` (${kindsOf(r.kinds)})` : ''}`);
  return { rps, p50: r.p50, p99: r.p99, failed, requests: n, cpuUs: c0 === undefined || c1 === undefined ? undefined : (c1 - c0) / n };
}

export interface WrkResult {
  requests: number; us: number; socket: number; failed: number; p50: number; p99: number;
  /** What failed, by kind (wrk-scripts.ts HEAD): `"503 -32050"`, `"200 -32005"`, `"socket timeout"`; absent for scripts of their own. */
  kinds?: Record<string, number>;
}

/** Failures by kind as one phrase: `503 -32050 × 20, socket timeout × 12`. */
export function kindsOf(kinds: Record<string, number> | undefined): string {
  return Object.entries(kinds ?? {}).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} × ${n}`).join(', ');
}

/** Adds `more`'s counts into `into`. */
export function addKinds(into: Record<string, number>, more: Record<string, number> | undefined): void {
  for (const [k, n] of Object.entries(more ?? {})) into[k] = (into[k] ?? 0) + n;
}

/** wrk in its own process; `onLine` sees each line of its output as it comes (the send script's SENT line). */
export function runWrk(url: string, script: string, seconds: number, connections: number, onLine?: (line: string, child: ChildProcess) => void): Promise<WrkResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '-s', script, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    let seen = 0;
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      for (let nl = out.indexOf('\n', seen); nl >= 0; nl = out.indexOf('\n', seen)) {
        onLine?.(out.slice(seen, nl), child);
        seen = nl + 1;
      }
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      const m = /^WRK (\{.*\})$/m.exec(out);
      if ((code !== 0 && signal !== 'SIGINT') || !m) return reject(new Error(`wrk exited ${code ?? signal}: ${out}`));
      resolve(JSON.parse(m[1]));
    });
  });
}

/** The median of `xs` (NaN for none). */
export function median(xs: number[]): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
