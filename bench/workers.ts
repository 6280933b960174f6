/**
 * `nodegate start --workers 2` against one process, in front of the same anvil, with anvil
 * itself measured in the same run: cache hits (eth_blockNumber and one address's balance, response cache on) and
 * calls that reach the node (eth_call, cache off). The load generator is wrk (native, its own process, one thread),
 * on the same 2 cores as everything else: on this machine two workers compete with wrk, anvil and the primary.
 * CPU per request is the whole process tree's (the primary and its workers), the primary's own part, and net of
 * each target's CPU at rest (what the requests cost, apart from the checks and timers every process runs).
 *   npm run bench -- workers
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchTargets } from './bench-targets.ts';
import { printTable } from './rpc-throughput.ts';
import { cpuMicros, startNodegateTarget, treeCpuMicros, type Target } from './targets.ts';
import { runWrk } from './wrk-cells.ts';
import { READS, writeScript } from './wrk-scripts.ts';

const CONNECTIONS = 64;
const DURATION = 4;
const ROUNDS = 3;
const IDLE_MS = 4000;

export async function benchWorkers(targets: BenchTargets): Promise<void> {
  const anvil = await targets.anvil();
  const start = (cache: boolean, workers: number) => startNodegateTarget(anvil.url, { cache, workers, name: `${workers} worker${workers > 1 ? 's' : ''}${cache ? ', cached' : ''}` });
  const one = { cached: await start(true, 1), uncached: await start(false, 1) };
  const two = { cached: await start(true, 2), uncached: await start(false, 2) };
  // Each target's CPU while no request comes (its checks and timers: a second worker has its own), per µs of wall
  // time: taken off the CPU under load, it leaves what the requests cost, which the background swamps when a busy
  // machine answers a few hundred requests a second.
  const idle = new Map<number, number>();
  for (const t of [one.cached, one.uncached, two.cached, two.uncached]) {
    const c0 = treeCpuMicros(t.pid) ?? 0;
    const w0 = performance.now();
    await sleep(IDLE_MS);
    idle.set(t.pid, ((treeCpuMicros(t.pid) ?? 0) - c0) / ((performance.now() - w0) * 1000));
  }
  const tmp = mkdtempSync(join(tmpdir(), 'nodegate-bench-'));
  const rows: string[][] = [];
  try {
    const cases: Array<[string, 'cached' | 'uncached', string]> = [
      ['eth_blockNumber (cache hit)', 'cached', 'eth_blockNumber'],
      ['eth_getBalance, one address (cache hit)', 'cached', 'eth_getBalance, one address'],
      ['eth_call (to the node)', 'uncached', 'eth_call (sha256 precompile)'],
    ];
    for (const [label, kind, workload] of cases) {
      const script = writeScript(join(tmp, 'w.lua'), READS.find((w) => w.name === workload)!.script(0));
      const sum = { anvil: 0, one: 0, two: 0, cpuOne: 0, cpuTwo: 0, cpuPrimary: 0, netOne: 0, netTwo: 0 };
      // Alternating rounds, so a drift of the machine's speed falls on all alike.
      for (let r = 0; r < ROUNDS; r++) {
        const order: Array<['anvil' | 'one' | 'two', Target]> = [['anvil', anvil], ['one', one[kind]], ['two', two[kind]]];
        if (r % 2) order.reverse();
        for (const [which, t] of order) {
          await runWrk(t.url, script, 1, CONNECTIONS);
          const c0 = treeCpuMicros(t.pid);
          const p0 = cpuMicros(t.pid);
          const w0 = performance.now();
          const res = await runWrk(t.url, script, DURATION, CONNECTIONS);
          const wallUs = (performance.now() - w0) * 1000;
          const c1 = treeCpuMicros(t.pid);
          const p1 = cpuMicros(t.pid);
          if (res.failed + res.socket) console.error(`  ${t.name}: ${res.failed + res.socket} of ${res.requests} failed`);
          sum[which] += res.requests / (res.us / 1e6) / ROUNDS;
          if (which !== 'anvil' && c0 !== undefined && c1 !== undefined) sum[which === 'one' ? 'cpuOne' : 'cpuTwo'] += (c1 - c0) / res.requests / ROUNDS;
          if (which !== 'anvil' && c0 !== undefined && c1 !== undefined) sum[which === 'one' ? 'netOne' : 'netTwo'] += (c1 - c0 - (idle.get(t.pid) ?? 0) * wallUs) / res.requests / ROUNDS;
          if (which === 'two' && p0 !== undefined && p1 !== undefined) sum.cpuPrimary += (p1 - p0) / res.requests / ROUNDS;
        }
      }
      const f = (x: number) => Math.round(x).toLocaleString('en-US');
      rows.push([label, f(sum.anvil), f(sum.one), `${(sum.one / sum.anvil).toFixed(2)}x`, sum.cpuOne.toFixed(0), f(sum.two), `${(sum.two / sum.anvil).toFixed(2)}x`, sum.cpuTwo.toFixed(0), `${(sum.two / sum.one).toFixed(2)}x`, sum.cpuPrimary.toFixed(1), `${(sum.cpuTwo / sum.cpuOne).toFixed(2)}x`, sum.netOne.toFixed(0), sum.netTwo.toFixed(0), `${(sum.netTwo / sum.netOne).toFixed(2)}x`]);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    for (const t of [one.cached, one.uncached, two.cached, two.uncached]) await t.stop();
  }
  console.log(`\nWorkers: --workers 2 against one process, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION} s; `
    + `${cpus().length} × ${cpus()[0]?.model.trim()} shared by wrk (-t1), anvil, and the targets`);
  printTable(['workload', 'anvil req/s', '1 process', '× anvil', 'cpu µs', '2 workers', '× anvil', 'cpu µs', '2 / 1', 'primary µs', 'cpu 2 / 1', 'net µs 1', 'net µs 2', 'net 2 / 1'], rows);
  console.log('cpu µs: CPU time per request of the whole Nodegate process tree (with 2 workers: the primary and both workers); primary µs: the primary\'s own part; net µs: cpu µs less the target\'s CPU at rest over the same time.');
}
