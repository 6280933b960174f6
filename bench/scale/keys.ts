/**
 * The keys section of `npm run bench -- scale`: 100,000 accounts and 1,000,000 keys in PostgreSQL, Nodegate started
 * on them (its startup timed), then cached eth_chainId calls (wrk, 32 connections, its own process) with one key,
 * keys drawn Zipf-like and uniformly from the million: rate and CPU per request of the Nodegate process, as ratios
 * against one key, in alternating rounds: one key with the Zipf-like draw, then one key with the uniform draw, each
 * draw's window against the one-key window of its round (paired.ts) (SCALE_KEYS_CONFIG: JSON merged over Nodegate's config, for comparisons).
 * Each window's CPU, Nodegate's and PostgreSQL's, counts the writes its requests put off (last uses, usage, quota,
 * explorer) until they are done, less what both use idle meanwhile: no draw pays for the one before it; and the rows
 * those writes are, per kind. Then, under the Zipf-like load, keys revoked by another writer of the store
 * (as another instance or the CLI does), each timed until Nodegate refuses it; and the API's list of the 10,000 keys
 * of one account, a page at a time, its p99.
 *   npm run bench -- scale
 */
import { readFileSync, rmSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startNodegate } from '../../test/helpers/process.ts';
import type { BenchTargets } from '../bench-targets.ts';
import { printTable } from '../rpc-throughput.ts';
import { CHAIN_ID, cpuMicros, forkingServerCpuMicros, mainThreadMicros } from '../targets.ts';
import { validateConfig } from '../../src/config/load.ts';
import { addKinds, kindsOf, median, runWrk } from '../wrk-cells.ts';
import { writeScript } from '../wrk-scripts.ts';
import { keyScript, type KeyDraw } from './key-scripts.ts';
import { pairedRatios } from './paired.ts';
import { buildKeyState, postgresServerPid, SCALE_PLAN, storeAt, valueOf } from './key-state.ts';

const ACCOUNTS = 100_000;
const KEYS = 1_000_000;
const BIG_ACCOUNT = 10_000;
const CONNECTIONS = 32;
/**
 * Before the rounds, the Zipf-like draw runs in windows of this long until the resolution cache is full (as in an
 * instance that has run a while: each key not in it then evicts one), at least three, at most WARM_WINDOWS; then one
 * key runs one window; the uniform draw runs one before its own rounds.
 */
const FIRST_WARM_S = 10;
const WARM_WINDOWS = 15;
/**
 * Each measured window: long enough to hold several rounds of the collector's full marking and of every flush. With
 * 5 s windows, two runs in one hour of builds that 45 s windows of an ad-hoc run could not tell apart (1.62x-1.79x
 * each) read the Zipf-like CPU at 1.29x and 1.86x one key's (docs/performance.md).
 */
const DURATION_S = 15;
const ROUNDS = 3;
const DRAWS: KeyDraw[] = ['one key', 'Zipf-like', 'uniform'];

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** Nodegate's configuration in this section. */
function configOn(anvilUrl: string): Record<string, unknown> {
  const { id: _, ...plan } = SCALE_PLAN;
  return {
    networks: { mainnet: { chainId: CHAIN_ID, upstream: anvilUrl } },
    plans: { scale: plan },
    accounts: { defaultPlan: 'scale' },
    cache: { enabled: true },
    // Settings to compare (e.g. every flush put off past the runs): JSON merged over these.
    ...(process.env.SCALE_KEYS_CONFIG ? JSON.parse(process.env.SCALE_KEYS_CONFIG) as object : {}),
  };
}

/** Until every write put off by requests is done: the longest interval of them under `config`, and a second to write. */
const deferredMs = (config: Record<string, unknown>) => {
  const c = validateConfig(structuredClone(config));
  return Math.max(c.auth.lastUsedFlushMs, c.analytics.flushMs, c.limits.usageFlushMs, c.explorer.flushMs) + 1000;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Nodegate on the database at `url`, answering: its process, and the ms from spawn to the first answer with `key`. */
async function startOn(url: string, anvilUrl: string, key?: string) {
  const t0 = performance.now();
  const proc = await startNodegate({
    env: { REDIS_URL: '', DATABASE_URL: url, NODEGATE_LOG_LEVEL: 'warn', NODEGATE_WORKERS: '' },
    config: configOn(anvilUrl),
  });
  const res = await fetch(`${new URL(proc.url).origin}/v1/mainnet/${key ?? proc.key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' });
  if (res.status !== 200) throw new Error(`the first call was refused: ${res.status} ${await res.text()}`);
  return { proc, startMs: performance.now() - t0, t0 };
}

export async function scaleKeys(targets: BenchTargets, tmp: string): Promise<void> {
  const anvil = await targets.anvil();
  // The same start on an empty store, for comparison (the machine's own start-up time).
  const empty = await buildKeyState(0, 0, 0);
  let emptyMs: number;
  try {
    const e = await startOn(empty.url, anvil.url);
    emptyMs = e.startMs;
    await e.proc.stop('SIGTERM');
    rmSync(e.proc.dataDir, { recursive: true, force: true });
  } finally {
    await empty.drop();
  }
  const state = await buildKeyState(ACCOUNTS, KEYS, BIG_ACCOUNT);
  let proc: Awaited<ReturnType<typeof startNodegate>> | undefined;
  try {
    const started = await startOn(state.url, anvil.url, valueOf(state.salt, 1));
    proc = started.proc;
    const startMs = started.startMs;
    const base = new URL(proc.url).origin;
    const call = (j: number) => fetch(`${base}/v1/mainnet/${valueOf(state.salt, j)}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' });
    // The keys read ahead (auth.keyDirectoryKeys), in the background after the first answer: until all are in.
    const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${base}/metrics`)).text())?.[1]);
    let readAhead = 0;
    for (let last = -1; readAhead < KEYS && performance.now() - started.t0 < 120_000; await new Promise((r) => setTimeout(r, 100))) {
      last = readAhead;
      readAhead = await metric('nodegate_key_directory_keys');
      if (readAhead === last && readAhead > 0 && performance.now() - started.t0 > 60_000) break;
    }
    const readAheadMs = performance.now() - started.t0;
    const rssStart = rssMiB(proc.pid);

    const scripts = Object.fromEntries(DRAWS.map((d, i) => [d, writeScript(join(tmp, `keys-${i}.lua`), keyScript(d, state.salt, KEYS, 1 + i))])) as Record<KeyDraw, string>;
    const cells: Record<KeyDraw, { rps: number[]; cpu: number[]; store: number[]; failed: number; kinds: Record<string, number>; p99: number[]; lookups: number[]; directory: number[]; user: number[]; kernel: number[]; busy: number[]; gc: number[]; rows: Array<Record<string, number>> }> = Object.fromEntries(DRAWS.map((d) => [d, { rps: [], cpu: [], store: [], failed: 0, kinds: {}, p99: [], lookups: [], directory: [], user: [], kernel: [], busy: [], gc: [], rows: [] }])) as never;
    // PostgreSQL's CPU in the same windows: what the keys' writes (usage, last uses, quota, explorer) cost the store,
    // on the same two cores as Nodegate and wrk.
    const postmaster = await postgresServerPid(state.url);
    const storeCpu = () => (postmaster === undefined ? NaN : forkingServerCpuMicros(postmaster) ?? NaN);
    /** Keys this Nodegate has looked up in the store since it started (its /metrics). */
    const lookups = () => metric('nodegate_key_lookups_total');
    /** Keys not in the resolution cache, taken from the keys read ahead (its /metrics). */
    const directoryReads = () => metric('nodegate_key_directory_reads_total');
    /** Seconds of garbage collection since start, every kind (prom-client's default metrics in /metrics). */
    /** Rows this Nodegate has written to the store since start for the records of requests, by kind (its /metrics). */
    const rowsWritten = async () => Object.fromEntries([...(await (await fetch(`${base}/metrics`)).text()).matchAll(/^nodegate_store_rows_written_total\{kind="(\w+)"\} (\S+)$/gm)].map((m) => [m[1], Number(m[2])]));
    const gcSeconds = async () => [...(await (await fetch(`${base}/metrics`)).text()).matchAll(/^nodegate_nodejs_gc_duration_seconds_sum\{[^}]*\} (\S+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    /** Resolutions the key cache holds (its /metrics), and its bound (auth.keyCacheEntries). */
    const held = () => metric('nodegate_key_cache_entries');
    const cacheEntries = validateConfig(structuredClone(configOn(anvil.url))).auth.keyCacheEntries;
    const warm: number[] = [];
    const heldAfter: number[] = [];
    for (let w = 0; w < WARM_WINDOWS; w++) {
      const l0 = await lookups();
      const res = await runWrk(base + '/', scripts['Zipf-like'], FIRST_WARM_S, CONNECTIONS);
      warm.push((await lookups() - l0) / res.requests);
      heldAfter.push(await held());
      if (w >= 2 && heldAfter[w] >= cacheEntries) break;
    }
    await runWrk(base + '/', scripts['one key'], FIRST_WARM_S, CONNECTIONS);
    // The writes put off by the warm-ups done, then Nodegate's and PostgreSQL's CPU while idle (checks of the node),
    // per ms: taken out of each window's wait for its own writes.
    const settleMs = deferredMs(configOn(anvil.url));
    await sleep(settleMs);
    const [i0, is0, it0] = [cpuMicros(proc.pid)!, storeCpu(), performance.now()];
    await sleep(settleMs);
    const idleMs = performance.now() - it0;
    const [idle, storeIdle] = [(cpuMicros(proc.pid)! - i0) / idleMs, (storeCpu() - is0) / idleMs];
    const pid = proc.pid;
    /** One measured window of draw `d`, and the wait for the writes it put off. */
    const window = async (d: KeyDraw) => {
      const l0 = await lookups();
      const r0 = await directoryReads();
      const g0 = await gcSeconds();
      const w0 = await rowsWritten();
      const [c0, s0, m0] = [cpuMicros(pid)!, storeCpu(), mainThreadMicros(pid)!];
      const res = await runWrk(base + '/', scripts[d], DURATION_S, CONNECTIONS);
      // The window alone: where the CPU of Nodegate's JavaScript thread goes while it answers.
      const m1 = mainThreadMicros(pid)!;
      cells[d].user.push((m1.user - m0.user) / res.requests);
      cells[d].kernel.push((m1.kernel - m0.kernel) / res.requests);
      cells[d].busy.push((m1.user + m1.kernel - m0.user - m0.kernel) / res.us);
      cells[d].gc.push(((await gcSeconds()) - g0) * 1e6 / res.requests);
      cells[d].lookups.push((await lookups() - l0) / res.requests);
      cells[d].directory.push((await directoryReads() - r0) / res.requests);
      // The window's writes done (and so none left for the next draw's window).
      const waited = performance.now();
      await sleep(settleMs);
      const waitedMs = performance.now() - waited;
      const [c1, s1] = [cpuMicros(pid)!, storeCpu()];
      const w1 = await rowsWritten();
      cells[d].rows.push(Object.fromEntries(Object.keys(w1).map((k) => [k, ((w1[k] - (w0[k] ?? 0)) * 1000) / res.requests])));
      cells[d].store.push((s1 - s0 - storeIdle * waitedMs) / res.requests);
      cells[d].rps.push(res.requests / (res.us / 1e6));
      cells[d].cpu.push((c1 - c0 - idle * waitedMs) / res.requests);
      cells[d].p99.push(res.p99);
      cells[d].failed += res.failed + res.socket;
      addKinds(cells[d].kinds, res.kinds);
    };
    // Alternating rounds, so a drift of the machine's speed falls on all alike: one key and the Zipf-like draw, then
    // the uniform draw, after a warm-up of its own, with one key. Each long-tailed draw is measured in its own
    // steady state: a uniform window between two Zipf-like ones fills the caches and records with keys the
    // Zipf-like draw seldom asks for, and the next Zipf-like window pays for them (docs/performance.md).
    for (const phase of [['one key', 'Zipf-like'], ['one key', 'uniform']] as KeyDraw[][]) {
      if (phase[1] === 'uniform') await runWrk(base + '/', scripts.uniform, FIRST_WARM_S, CONNECTIONS);
      for (let r = 0; r < ROUNDS; r++) for (const d of r % 2 ? [...phase].reverse() : phase) await window(d);
    }
    const rssLoaded = rssMiB(proc.pid);
    const one = cells['one key'];
    /**
     * Each draw against one key round by round (paired.ts): one key's first ROUNDS windows are the Zipf-like draw's
     * rounds, the next ROUNDS the uniform draw's. Per window: rate, CPU, and the JavaScript thread's CPU a request.
     */
    const thread = (c: typeof one) => c.user.map((u, i) => u + c.kernel[i]);
    const paired = (d: KeyDraw) => {
      const c = cells[d];
      const at = d === 'uniform' ? ROUNDS : 0;
      const of = (xs: number[]) => xs.slice(at, at + ROUNDS);
      const main = pairedRatios(c, { rps: of(one.rps), cpu: of(one.cpu) });
      const t1 = of(thread(one));
      return { ...main, thread: thread(c).slice(0, t1.length).map((t, i) => t / t1[i]) };
    };
    const ratio = (d: KeyDraw, k: 'rps' | 'cpu' | 'thread') => (d === 'one key' ? '1.00x' : `${median(paired(d)[k]).toFixed(2)}x`);
    const f = (x: number) => Math.round(x).toLocaleString('en-US');
    console.log(`\nScale, keys: ${f(ACCOUNTS)} accounts, ${f(KEYS)} keys in PostgreSQL (built in ${(state.buildMs / 1000).toFixed(1)} s); `
      + `cached eth_chainId, wrk ${CONNECTIONS} connections; the Zipf-like draw first until the key cache was full (${warm.length} × ${FIRST_WARM_S} s: ${heldAfter.map(f).join(', ')} of ${f(cacheEntries)} resolutions held; store lookups ${warm.map((x) => (x * 1000).toFixed(0)).join(', ')} per 1,000 requests), `
      + `${FIRST_WARM_S} s of one key, then ${ROUNDS} alternating rounds of ${DURATION_S} s of one key and the Zipf-like draw, then ${FIRST_WARM_S} s of the uniform draw and ${ROUNDS} rounds of one key and it (medians; each ratio the median of a draw's windows against its round's one key), each window's CPU with its put-off writes (${(settleMs / 1000).toFixed(0)} s after it, less idle); ${cpus().length} × ${cpus()[0]?.model.trim()} shared by wrk, PostgreSQL and Nodegate`);
    printTable(['keys', 'req/s', '× one key', 'cpu µs/req', '× one key', 'PostgreSQL cpu µs/req', 'p99 ms', 'store lookups / 1,000 req', 'read ahead / 1,000 req', 'failed'], DRAWS.map((d) => {
      const c = cells[d];
      return [d, f(median(c.rps)), ratio(d, 'rps'), median(c.cpu).toFixed(1), ratio(d, 'cpu'), Number.isNaN(median(c.store)) ? 'n/a' : median(c.store).toFixed(1), (median(c.p99) / 1000).toFixed(1), (median(c.lookups) * 1000).toFixed(1), (median(c.directory) * 1000).toFixed(1), String(c.failed)];
    }));
    // What a client of the failed requests saw: the status and JSON-RPC code, or wrk's socket error (a time-out: no
    // answer within wrk's 2 s).
    for (const d of DRAWS) if (cells[d].failed) console.log(`failed, ${d}: ${kindsOf(cells[d].kinds)}`);

    // The rate is Nodegate's one JavaScript thread's when it is busy all the window: its CPU per request, user and
    // kernel apart, and the part of it garbage collection took (V8's helper threads collect too, off this figure).
    console.log('Nodegate\'s JavaScript thread in the same windows (medians):');
    printTable(['keys', 'busy', 'user µs/req', 'kernel µs/req', '× one key', 'of which GC µs/req'], DRAWS.map((d) => {
      const c = cells[d];
      return [d, `${Math.round(median(c.busy) * 100)} %`, median(c.user).toFixed(1), median(c.kernel).toFixed(1), ratio(d, 'thread'), median(c.gc).toFixed(1)];
    }));

    // What the store is asked to write for them: a row per key, account or call in use per flush, whatever the requests.
    const KINDS = ['usage', 'quota', 'last_use', 'explorer'];
    console.log('Rows written to the store per 1,000 requests in the same windows (medians; nodegate_store_rows_written_total):');
    printTable(['keys', ...KINDS, 'all'], DRAWS.map((d) => {
      const of = (k: string) => median(cells[d].rows.map((r) => r[k] ?? 0));
      return [d, ...KINDS.map((k) => of(k).toFixed(1)), median(cells[d].rows.map((r) => KINDS.reduce((sum, k) => sum + (r[k] ?? 0), 0))).toFixed(1)];
    }));

    // Revocation by another writer of the store, under the Zipf-like load: keys in use (asked for until cached).
    const other = await storeAt(state.url);
    /** Until the key's first refusal (any), and until its 401 key_revoked (its lookup answered). */
    const revocations: number[] = [];
    const revoked401: number[] = [];
    const load = runWrk(base + '/', scripts['Zipf-like'], 12, CONNECTIONS);
    try {
      for (const j of [KEYS - 1, KEYS - 2, KEYS - 3, KEYS - 4, KEYS - 5]) {
        for (let i = 0; i < 50; i++) {
          const res = await call(j);
          if (res.status !== 200) throw new Error(`key ${j} refused before its revocation: ${res.status} ${await res.text()}`);
        }
        await other.keys.revokeKey(`key${j}`);
        const at = performance.now();
        let status = (await call(j)).status;
        while (status === 200) status = (await call(j)).status;
        revocations.push(performance.now() - at);
        while (status !== 401) status = (await call(j)).status;
        revoked401.push(performance.now() - at);
      }
    } finally {
      await load.catch(() => {});
      await other.close();
    }

    const ms = (xs: number[]) => `${xs.map((x) => x.toFixed(0)).join(', ')} ms (max ${Math.max(...xs).toFixed(0)} ms)`;
    console.log(`revocation by another writer, under the Zipf-like load: refused after ${ms(revocations)}; 401 key_revoked after ${ms(revoked401)}`);

    // The keys list of the account with 10,000 keys, as the API and the dashboard page it: 100 a page, at most 40
    // pages a second (the management API takes 50 calls a second of an account).
    const pages: number[] = [];
    let listed = 0;
    for (let walk = 0; walk < 3; walk++) {
      let cursor: string | null = '';
      listed = 0;
      while (cursor !== null) {
        const t = performance.now();
        const res = await fetch(`${base}/api/v1/keys?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${valueOf(state.salt, 0)}` } });
        const body = await res.json() as { keys: unknown[]; nextCursor: string | null };
        pages.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, Math.max(0, 25 - (performance.now() - t))));
        if (res.status !== 200) throw new Error(`keys list: ${res.status} ${JSON.stringify(body)}`);
        listed += body.keys.length;
        cursor = body.nextCursor;
      }
    }

    console.log(`startup with ${f(KEYS)} keys: ${(startMs / 1000).toFixed(2)} s to the first answer (${(proc.startMs / 1000).toFixed(2)} s to the banner; on an empty store: ${(emptyMs / 1000).toFixed(2)} s), `
      + `${f(readAhead)} keys read ahead ${(readAheadMs / 1000).toFixed(2)} s after the spawn; RSS ${rssStart.toFixed(0)} MiB then, ${rssLoaded.toFixed(0)} MiB after the runs`);
    console.log(`keys list of one account (${f(listed)} keys, 100 a page, ${pages.length} pages): p50 ${pct(pages, 50).toFixed(1)} ms, p99 ${pct(pages, 99).toFixed(1)} ms`);
  } finally {
    await proc?.stop('SIGTERM');
    if (proc) rmSync(proc.dataDir, { recursive: true, force: true });
    await state.drop();
  }
}
