// Crash safety of the store, shown on Nodegate as a real process: SIGKILL while keys are being created (by the CLI
// and by a process doing nothing but store writes) and while traffic flows loses no key whose creation was
// reported, and no usage older than the last flush (limits.usageFlushMs); the SQLite file opens cleanly after.
// Run: node --import tsx --test test/e2e/crash-safety.test.ts
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { after, describe, test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { cliCommand, killAll, sleep, startNodegate, tempDataDir, type NodegateProcess, type StartOptions } from '../helpers/process.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const FLUSH_MS = 250;
const COST = 5; // eth_chainId's cost in its spec (src/methods/specs/)
const QUOTA = 3000 * COST;
/** A plan whose monthly quota the usage test spends; the keys test gets one it never meets. */
const configWith = (cuPerMonth: number) => ({
  limits: { usageFlushMs: FLUSH_MS },
  plans: { crash: { name: 'Crash', cuPerSecond: 10_000_000, cuPerMonth, maxBatchSize: 100, maxKeys: 1_000_000 } },
  // The writer makes keys on one account as fast as it can: this suite is about the store, not the key cap.
  accounts: { defaultPlan: 'crash' },
  log: { level: 'warn' },
});
const note = (t: TestContext, msg: string) => { t.diagnostic(msg); console.log(`# ${t.name}: ${msg}`); };

/** The environment the CLI and the writer need to find this data directory's store and configuration. */
const envOf = (ng: NodegateProcess) => ({ ...process.env, NODEGATE_DATA_DIR: ng.dataDir, NODEGATE_CONFIG: join(ng.dataDir, 'test-config.json') });
const start = (cuPerMonth: number, opts: StartOptions = {}) => startNodegate({ config: configWith(cuPerMonth), ...opts });

/** Opens the store file as a fresh process would after the crash: integrity, foreign keys, and a query. */
function inspectStore<T>(dataDir: string, query: (db: Database.Database) => T): { integrity: string; foreignKeyProblems: number; result: T } {
  const db = new Database(join(dataDir, 'nodegate.db'));
  try {
    const integrity = db.pragma('integrity_check', { simple: true }) as string;
    const foreignKeyProblems = (db.pragma('foreign_key_check') as unknown[]).length;
    return { integrity, foreignKeyProblems, result: query(db) };
  } finally {
    db.close();
  }
}

const month = () => new Date().toISOString().slice(0, 7);
const storedUsage = (db: Database.Database) =>
  (db.prepare('SELECT COALESCE(SUM(compute_units), 0) AS n FROM usage WHERE month = ?').get(month()) as { n: number }).n;

/** `n` eth_chainId calls in one request (a batch when n > 1): 200, 429, or undefined when the connection died. */
async function chainId(url: string, n = 1): Promise<number | undefined> {
  const call = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}';
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: n === 1 ? call : `[${Array(n).fill(call).join(',')}]` });
    await res.text();
    return res.status;
  } catch {
    return undefined;
  }
}

/** Traffic from `workers` loops (pausing `pauseMs` between requests) until stopped; records when each admitted request was answered. */
function traffic(url: string, workers: number, pauseMs = 0) {
  const acked: number[] = [];
  let sent = 0;
  let stopped = false;
  const done = Promise.all(Array.from({ length: workers }, async () => {
    while (!stopped) {
      sent++;
      const status = await chainId(url);
      if (status === 200) acked.push(Date.now());
      else if (status === undefined) return;
      if (pauseMs) await sleep(pauseMs);
    }
  }));
  return { acked, sentCount: () => sent, stop: () => { stopped = true; return done; } };
}

/** `nodegate keys create --json`; resolves with the key's value, or undefined when it did not report one. */
function cliCreateKey(env: NodeJS.ProcessEnv, name: string, killAfterMs?: number): Promise<string | undefined> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [...cliCommand(), 'keys', 'create', '--name', name, '--json'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => { out += s; });
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('exit', () => {
      clearTimeout(timer);
      try { res(JSON.parse(out).value); } catch { res(undefined); }
    });
  });
}

describe('crash safety: SIGKILL loses nothing that was reported', () => {
  after(killAll);

  test('keys reported before a SIGKILL (from the CLI, and from a process doing only store writes) all work after the restart', async (t) => {
    const dataDir = tempDataDir();
    let ng = await start(1e15, { dataDir });
    const key = ng.key;
    const env = envOf(ng);
    const load = traffic(ng.rpcUrl(), 4);

    // The CLI, one key after another, as an operator's script would; the last one is killed at a random moment.
    const reported: string[] = [];
    for (let i = 0; i < 3; i++) {
      const v = await cliCreateKey(env, `cli-${i}`);
      assert.ok(v, 'the CLI reports the key');
      reported.push(v);
    }
    const killedCli = cliCreateKey(env, 'cli-killed', 300 + Math.floor(Math.random() * 2500));

    // A process doing nothing but store writes, next to the gateway serving traffic and the CLI.
    const writer = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/key-writer.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const written: string[] = [];
    let partial = '';
    writer.stdout.setEncoding('utf8').on('data', (s: string) => {
      const lines = (partial + s).split('\n');
      partial = lines.pop()!;
      written.push(...lines);
    });
    const writerExit = new Promise((r) => writer.on('exit', r));
    const until = Date.now() + 20_000;
    while (written.length < 200 && Date.now() < until) await sleep(20);
    assert.ok(written.length >= 200, `the writer created keys (${written.length})`);

    // Kill everything at once, mid-write and mid-traffic.
    writer.kill('SIGKILL');
    const killed = await ng.stop('SIGKILL', { group: true });
    assert.equal(killed.signal, 'SIGKILL');
    await writerExit;
    await load.stop();
    const lastCli = await killedCli;
    if (lastCli) reported.push(lastCli);
    note(t, `${reported.length} CLI keys and ${written.length} writer keys reported before the kill; ${load.acked.length} requests served`);

    const { integrity, foreignKeyProblems, result: stored } = inspectStore(dataDir, (db) => (db.prepare('SELECT COUNT(*) AS n FROM api_keys').get() as { n: number }).n);
    assert.equal(integrity, 'ok');
    assert.equal(foreignKeyProblems, 0);
    assert.ok(stored >= reported.length + written.length + 1, `${stored} keys stored`);

    ng = await start(1e15, { dataDir, key });
    // Through the wire, as their owners would: every reported key works.
    const all = [key, ...reported, ...written];
    const failures: string[] = [];
    const queue = [...all];
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let k = queue.shift(); k; k = queue.shift()) {
        const res = await fetch(`${ng.url}/v1/mainnet/${k}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
        const body = await res.json() as { result?: string };
        if (res.status !== 200 || body.result !== '0x1') failures.push(`${k.slice(0, 10)}…: ${res.status}`);
      }
    }));
    assert.deepEqual(failures, [], 'every reported key works after the restart');
    note(t, `all ${all.length} keys work after the restart`);
    await ng.stop();
  });

  test('usage survives SIGKILL up to the last flush, and the monthly quota counts it after the restart', async (t) => {
    const dataDir = tempDataDir();
    let ng = await start(QUOTA, { dataDir });
    const key = ng.key;

    // 1. Traffic, then a pause longer than a flush, then SIGKILL: every admitted request is in the store.
    let load = traffic(ng.rpcUrl(), 4);
    while (load.acked.length < 300) await sleep(10);
    await load.stop();
    const first = load.acked.length;
    await sleep(3 * FLUSH_MS);
    await ng.stop('SIGKILL', { group: true });
    let inspected = inspectStore(dataDir, storedUsage);
    assert.equal(inspected.integrity, 'ok');
    assert.equal(inspected.result, first * COST, 'all usage flushed before the kill is kept');
    note(t, `phase 1: ${first} requests served, ${inspected.result} units stored (${first * COST} spent)`);

    // 2. SIGKILL in the middle of traffic: what was answered more than a flush interval before the kill is kept;
    // nothing is counted that was not spent.
    ng = await start(QUOTA, { dataDir, key });
    load = traffic(ng.rpcUrl(), 2, 5);
    await sleep(1500 + Math.random() * 1000);
    const killedAt = Date.now();
    await ng.stop('SIGKILL', { group: true });
    await load.stop();
    inspected = inspectStore(dataDir, storedUsage);
    assert.equal(inspected.integrity, 'ok');
    assert.equal(inspected.foreignKeyProblems, 0);
    const second = inspected.result / COST - first;
    // Flushes run every FLUSH_MS; one more interval, and a little, of slack for a busy event loop on a small machine.
    const SLACK_MS = 2 * FLUSH_MS + 250;
    const surely = load.acked.filter((at) => at < killedAt - SLACK_MS).length;
    note(t, `phase 2: ${load.acked.length} answered (${load.sentCount()} sent), ${second} stored, ${surely} of them answered over ${SLACK_MS} ms before the kill; lost: ${Math.max(0, load.acked.length - second)}`);
    assert.ok(second >= surely, `usage older than the last flush is kept (${second} stored < ${surely})`);
    assert.ok(second <= load.sentCount(), 'no usage that was not spent');

    // 3. After the restart the quota goes on from what the store kept: exactly the remaining units are admitted.
    ng = await start(QUOTA, { dataDir, key });
    const remaining = Math.floor((QUOTA - inspected.result) / COST);
    let admitted = 0;
    // Batches of 20 (a batch is admitted or refused as a whole), then single calls for the rest. A batch under 1 KiB
    // (20 calls: 981 bytes) refused for its cost costs nothing; a larger one keeps its body's size units.
    for (const size of [20, 1]) {
      for (;;) {
        const status = await chainId(ng.rpcUrl(), size);
        if (status === 429) break;
        assert.equal(status, 200);
        admitted += size;
        assert.ok(admitted <= remaining, 'the quota forgot usage');
      }
    }
    assert.equal(admitted, remaining);
    note(t, `phase 3: ${admitted} requests admitted before 429, as the stored usage left`);
    await ng.stop();
  });
});
