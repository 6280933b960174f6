/**
 * The measure of the hot path, in one run: each figure it is held to, as a ratio to a reference measured
 * in the same run, by wrk (native, its own process, one thread), the targets taking turns in rounds so that a slow
 * spell of the machine falls on all of them alike; each figure is the median of the rounds.
 * - a cache hit (eth_blockNumber on Nodegate with its cache) against the floor (bench/floor.ts: node:http answering
 *   from memory) and against anvil: rate, and CPU per request of the target's process; and the floor sending the
 *   headers a cache hit carries (`floor.ts headers`), what those headers cost alone; and the floor with its head
 *   made as one string as Nodegate makes it (`floor.ts raw`, src/http/raw-head.ts), what that saves alone;
 * - distinct uncached eth_getBalance and eth_call against anvil;
 * - a batch of 10 against single requests, in items per second;
 * - the median latency Nodegate adds at concurrency 1 (one connection) over anvil;
 * - the bare proxy (bench/bare-proxy.ts: node:http in, undici out, no checks) on the uncached reads and at
 *   concurrency 1: what any Node.js proxy in front of anvil costs here, against which Nodegate's own work shows;
 *   and the same over one WebSocket to anvil (bench/bare-ws-proxy.ts), whether another transport lifts that ceiling.
 * Limits, authentication, validation and usage recording are on in every Nodegate cell.
 *   npm run bench -- hot-path
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchTargets } from './bench-targets.ts';
import { printTable } from './rpc-throughput.ts';
import type { Target } from './targets.ts';
import { measure, median, runWrk, type Cell } from './wrk-cells.ts';
import { READS, writeScript } from './wrk-scripts.ts';

const CONNECTIONS = 32;
const DURATION = 4;
/**
 * Five rounds: with three, one slow spell in a cell moved a median by 5-8 % (the cache hit read 0.84x and 0.78x the
 * floor in two runs of the same build on the same machine); the median of five moves less, the run takes ~7 minutes.
 */
const ROUNDS = 5;
const workload = (name: string) => READS.find((w) => w.name === name)!;
const BLOCK_NUMBER = workload('eth_blockNumber');
const BALANCE = workload('eth_getBalance, distinct addresses');
const CALL = workload('eth_call (sha256 precompile)');
const BATCH = workload('batch of 10 reads');

export async function benchHotPath(targets: BenchTargets): Promise<void> {
  const [anvil, floor, floorHeaders, floorRaw, proxy, wsProxy, nodegate, cached] = [await targets.anvil(), await targets.floor(), await targets.floorWithHeaders(), await targets.floorRaw(), await targets.proxy(), await targets.wsProxy(), await targets.nodegate(), await targets.nodegateCached()];
  const tmp = mkdtempSync(join(tmpdir(), 'nodegate-hot-'));
  const cells = new Map<string, Cell[]>();
  let offset = Math.floor(Math.random() * 2 ** 40);
  const cell = async (id: string, t: Target, w: (typeof READS)[number], connections = CONNECTIONS) => {
    await runWrk(t.url, writeScript(join(tmp, 'warm.lua'), w.script((offset += 10_000_000))), 1, connections);
    const c = await measure(t, writeScript(join(tmp, 'cell.lua'), w.script((offset += 10_000_000))), DURATION, connections);
    cells.set(id, [...(cells.get(id) ?? []), c]);
  };
  try {
    for (let r = 0; r < ROUNDS; r++) {
      // The cache hit next to the floor it is read against: the two cells a few seconds apart, not twenty.
      await cell('floor hit', floor, BLOCK_NUMBER);
      await cell('cached hit', cached, BLOCK_NUMBER);
      await cell('floor headers hit', floorHeaders, BLOCK_NUMBER);
      await cell('floor raw hit', floorRaw, BLOCK_NUMBER);
      await cell('anvil blockNumber', anvil, BLOCK_NUMBER);
      await cell('anvil balance', anvil, BALANCE);
      await cell('proxy balance', proxy, BALANCE);
      await cell('ws proxy balance', wsProxy, BALANCE);
      await cell('nodegate balance', nodegate, BALANCE);
      await cell('anvil call', anvil, CALL);
      await cell('nodegate call', nodegate, CALL);
      await cell('nodegate batch', nodegate, BATCH);
      await cell('anvil c1', anvil, BLOCK_NUMBER, 1);
      await cell('proxy c1', proxy, BLOCK_NUMBER, 1);
      await cell('ws proxy c1', wsProxy, BLOCK_NUMBER, 1);
      await cell('nodegate c1', nodegate, BLOCK_NUMBER, 1);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const m = (id: string, f: (c: Cell) => number | undefined) => median(cells.get(id)!.map((c) => f(c) ?? NaN));
  const rps = (id: string) => m(id, (c) => c.rps);
  const cpu = (id: string) => m(id, (c) => c.cpuUs);
  const p50 = (id: string) => m(id, (c) => c.p50);
  const x = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  console.log(`\nhot path: ${CONNECTIONS} connections, ${DURATION} s a cell, median of ${ROUNDS} rounds; wrk -t1 in its own process; `
    + `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()}`);
  printTable(['figure', 'Nodegate', 'reference', 'ratio', 'the bar'], [
    ['cache hit, req/s (eth_blockNumber) vs the floor', n(rps('cached hit')), n(rps('floor hit')), x(rps('cached hit'), rps('floor hit')), '>= 0.80x'],
    ['cache hit, CPU µs a request vs the floor', cpu('cached hit').toFixed(0), cpu('floor hit').toFixed(0), x(cpu('cached hit'), cpu('floor hit')), '<= 1.30x'],
    ['  the floor with a cache hit\'s headers, req/s vs the floor', n(rps('floor headers hit')), n(rps('floor hit')), x(rps('floor headers hit'), rps('floor hit')), '(reference)'],
    ['  the floor with a cache hit\'s headers, CPU µs vs the floor', cpu('floor headers hit').toFixed(0), cpu('floor hit').toFixed(0), x(cpu('floor headers hit'), cpu('floor hit')), '(reference)'],
    ['  the floor, its head made whole as Nodegate makes it, req/s vs the floor', n(rps('floor raw hit')), n(rps('floor hit')), x(rps('floor raw hit'), rps('floor hit')), '(reference)'],
    ['  the floor, its head made whole as Nodegate makes it, CPU µs vs the floor', cpu('floor raw hit').toFixed(0), cpu('floor hit').toFixed(0), x(cpu('floor raw hit'), cpu('floor hit')), '(reference)'],
    ['cache hit, req/s vs anvil', n(rps('cached hit')), n(rps('anvil blockNumber')), x(rps('cached hit'), rps('anvil blockNumber')), ''],
    ['distinct eth_getBalance, req/s vs anvil', n(rps('nodegate balance')), n(rps('anvil balance')), x(rps('nodegate balance'), rps('anvil balance')), '>= 0.35x'],
    ['  the bare proxy, req/s vs anvil', n(rps('proxy balance')), n(rps('anvil balance')), x(rps('proxy balance'), rps('anvil balance')), '(reference)'],
    ['  the bare proxy over one WebSocket, req/s vs anvil', n(rps('ws proxy balance')), n(rps('anvil balance')), x(rps('ws proxy balance'), rps('anvil balance')), '(reference)'],
    ['eth_call, req/s vs anvil', n(rps('nodegate call')), n(rps('anvil call')), x(rps('nodegate call'), rps('anvil call')), '>= 0.35x'],
    ['batch of 10, items/s vs single getBalance', n(rps('nodegate batch') * 10), n(rps('nodegate balance')), x(rps('nodegate batch') * 10, rps('nodegate balance')), '>= 3x'],
    ['median latency at concurrency 1, µs vs anvil', n(p50('nodegate c1')), n(p50('anvil c1')), `+${n(p50('nodegate c1') - p50('anvil c1'))} µs`, '<= +100 µs'],
    ['  the bare proxy at concurrency 1, µs vs anvil', n(p50('proxy c1')), n(p50('anvil c1')), `+${n(p50('proxy c1') - p50('anvil c1'))} µs`, '(reference)'],
    ['  the bare proxy over one WebSocket at concurrency 1', n(p50('ws proxy c1')), n(p50('anvil c1')), `+${n(p50('ws proxy c1') - p50('anvil c1'))} µs`, '(reference)'],
  ]);
  console.log('CPU µs: CPU time of the target process per request (/proc); Nodegate: uncached (cache off) but for the cache-hit rows.');
  // Each round's own ratio (its two cells minutes apart at most), so that a median near the bar can be read with
  // its spread: one slow spell in one round shows here, and moves the median less.
  const each = (a: string, b: string, f: (c: Cell) => number | undefined, k = 1) =>
    cells.get(a)!.map((c, i) => ((f(c) ?? NaN) * k / (f(cells.get(b)![i]) ?? NaN)).toFixed(2)).join(' ');
  console.log('round by round:');
  console.log(`  cache hit vs the floor: rate ${each('cached hit', 'floor hit', (c) => c.rps)}; CPU ${each('cached hit', 'floor hit', (c) => c.cpuUs)}`);
  console.log(`  distinct eth_getBalance vs anvil ${each('nodegate balance', 'anvil balance', (c) => c.rps)}; eth_call ${each('nodegate call', 'anvil call', (c) => c.rps)}; batch ${each('nodegate batch', 'nodegate balance', (c) => c.rps, 10)}`);
  console.log(`  added p50 at concurrency 1, µs: ${cells.get('nodegate c1')!.map((c, i) => Math.round(c.p50 - cells.get('anvil c1')![i].p50)).join(' ')}`);
}
