/**
 * Instructions a cache hit costs with `--workers 2` against one process, counted by callgrind (bench/instructions.ts
 * says how, and why: CPU time on this shared machine moves 20-40 % between runs). Here every process of the tree is
 * counted (`--trace-children=yes`: the primary and both workers), each its main thread, and the sum divided by the
 * requests answered: what a request costs the whole gateway, IPC to the primary included.
 *   npm run bench -- callgrind-cluster
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchTargets } from './bench-targets.ts';
import { printTable } from './rpc-throughput.ts';
import { startNodegateTarget, type Target } from './targets.ts';
import { median, runWrk } from './wrk-cells.ts';
import { READS, writeScript } from './wrk-scripts.ts';

const WINDOW = 5;
const COUNTED = 15;
const RUNS = 2;
const CONNECTIONS = 8;

export async function benchWorkersInstructions(targets: BenchTargets): Promise<void> {
  if (spawnSync('valgrind', ['--version']).error) {
    console.error('this bench needs valgrind (callgrind): apt-get install valgrind');
    return;
  }
  const anvil = await targets.anvil();
  const tmp = mkdtempSync(join(tmpdir(), 'nodegate-workers-instructions-'));
  const lua = writeScript(join(tmp, 'w.lua'), READS.find((w) => w.name === 'eth_blockNumber')!.script(0));
  const results = new Map<string, number[]>();
  try {
    for (let r = 0; r < RUNS; r++) {
      for (const workers of [0, 2]) {
        const name = workers ? `${workers} workers (primary and workers)` : '1 process';
        const perRequest = await countedTree((wrap) => startNodegateTarget(anvil.url, { cache: true, workers, wrap, name }), lua, join(tmp, `cg-${r}-${workers}`));
        results.set(name, [...(results.get(name) ?? []), perRequest]);
        console.log(`  ${name}: ${Math.round(perRequest).toLocaleString('en-US')} instructions a cache hit`);
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const one = median(results.get('1 process')!);
  console.log(`\neth_blockNumber cache hits, instructions a request (callgrind, each process's main thread, user space; median of ${RUNS} runs of ${COUNTED} s after a warm-up; wrk -t1 -c${CONNECTIONS})`);
  printTable(['target', 'instructions a request', 'vs 1 process'], [...results.keys()].map((name) => [name, `${(median(results.get(name)!) / 1000).toFixed(1)}k`, `${(median(results.get(name)!) / one).toFixed(2)}x`]));
}

/** The processes of the tree under `pid` (a `--workers N` primary's workers), `pid` first. */
function tree(pid: number): number[] {
  const children = readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
  return [pid, ...children.flatMap(tree)];
}

/** One target under callgrind, every process of it: warmed up, counted for COUNTED s of load, stopped. */
async function countedTree(start: (wrap: string[]) => Promise<Target>, lua: string, out: string): Promise<number> {
  const t = await start(['valgrind', '--quiet', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', '--trace-children=yes', `--callgrind-out-file=${out}.%p`]);
  try {
    for (let i = 0, last = 0; i < 12; i++) {
      const w = await runWrk(t.url, lua, WINDOW, CONNECTIONS);
      if (i >= 2 && Math.abs(w.requests - last) <= 0.1 * last) break;
      last = w.requests;
    }
    // Only the node processes (callgrind_control lists the valgrind-run ones; anvil is not a child).
    const pids = tree(t.pid).filter((p) => spawnSync('callgrind_control', ['-s', String(p)]).status === 0);
    for (const p of pids) control(p, '-i', 'on');
    const r = await runWrk(t.url, lua, COUNTED, CONNECTIONS);
    for (const p of pids) control(p, '-i', 'off');
    let instructions = 0;
    for (const p of pids) {
      control(p, '-d');
      const file = `${out}.${p}.1-01`;
      let totals: RegExpExecArray | null = null;
      for (let waited = 0; !totals; waited += 100) {
        if (waited > 120_000) throw new Error(`no callgrind dump of ${p}'s main thread`);
        if (existsSync(file)) totals = /^totals: (\d+)$/m.exec(readFileSync(file, 'utf8'));
        if (!totals) await sleep(100);
      }
      instructions += Number(totals[1]);
    }
    if (r.failed > 0) throw new Error(`${t.name}: ${r.failed} requests failed while counted`);
    console.log(`  ${t.name}: ${pids.length} processes counted, ${r.requests} requests`);
    return instructions / r.requests;
  } finally {
    await t.stop();
  }
}

function control(pid: number, ...args: string[]): void {
  const r = spawnSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${args.join(' ')} ${pid}: ${r.stderr || r.stdout}`);
}
