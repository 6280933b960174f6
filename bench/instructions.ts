/**
 * Instructions a request costs, counted by valgrind's callgrind: what a request's user-space work is, free
 * of the machine's load. CPU timings here move 20-40 % between runs of the same build (a shared VM with no hardware
 * counters).
 *   npm run bench -- instructions                   (this checkout: the references and Nodegate)
 *   npm run bench -- instructions <ref> [<ref>...]  (commits side by side: Nodegate of each, and the floor)
 * Each target runs under callgrind alone (the floor, the floor with a cache hit's headers, Nodegate with its cache;
 * and on distinct uncached eth_getBalance, the two bare proxies and Nodegate in front of anvil, which runs natively
 * and is not counted), is warmed up by wrk until its code is compiled, then counted
 * for a fixed time of wrk's load: the user-space instructions of its main thread (the JavaScript, node's HTTP, V8's
 * runtime and garbage collection there) divided by the requests answered. Not counted: the kernel (the same read
 * and write per request for every target: about a third of a cache hit's CPU time), and V8's compiler threads
 * (work that ends once the code is warm). The floor's count repeats to a fraction of a per cent; Nodegate's has
 * moved by 1-25 % between runs of one build, with how far V8 had optimised it when counting began (a run that counts
 * fewer requests counts more instructions each). The table gives the median of the runs; read them all.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { printTable } from './rpc-throughput.ts';
import { startAnvil, startBareProxy, startBareWsProxy, startFloor, startNodegateTarget, type Target } from './targets.ts';
import { median, runWrk } from './wrk-cells.ts';
import { checkout, resolveCommit } from './worktree.ts';
import { READS, writeScript } from './wrk-scripts.ts';

/**
 * Warm-up: windows of WINDOW seconds of load until one answers within 10 % of as many requests as the one before
 * (at least 3, at most 12): under valgrind V8's compiler takes tens of seconds to reach the code's steady state,
 * and a count taken earlier counted the interpreter too (twice the instructions on one run in two). Then COUNTED
 * seconds counted.
 */
const WINDOW = 5;
const COUNTED = 15;
const RUNS = 2;
const CONNECTIONS = 8;

interface Counted { requests: number; instructions: number }

/**
 * `refs`: commits to compare (`npm run bench -- instructions 66f2abb HEAD`): then each one's Nodegate, cache hit and
 * uncached, from its own worktree (bench/worktree.ts, its source through tsx), the commits taking turns, with the
 * floor as the reference; without refs, the targets above from this checkout's build.
 */
export async function benchInstructions(refs: string[] = []): Promise<void> {
  if (spawnSync('valgrind', ['--version']).error) {
    console.error('the instructions bench needs valgrind (callgrind): apt-get install valgrind');
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), 'nodegate-instructions-'));
  const script = (name: string) => writeScript(join(tmp, `${name.replace(/\W+/g, '-')}.lua`), READS.find((w) => w.name === name)!.script(Math.floor(Math.random() * 2 ** 40)));
  const blockNumber = script('eth_blockNumber');
  const balance = script('eth_getBalance, distinct addresses');
  const anvil = await startAnvil();
  const results = new Map<string, number[]>();
  try {
    type Start = (wrap: string[]) => Promise<Target>;
    // This checkout's build, or each commit's worktree: a cache hit and an uncached read of each.
    const nodegates = refs.length
      ? refs.map((ref) => { const sha = resolveCommit(ref); return { label: `Nodegate ${sha.slice(0, 9)}`, root: checkout(sha) }; })
      : [{ label: 'Nodegate', root: undefined }];
    const targets: Array<[string, Start, string]> = [
      ['floor', (wrap) => startFloor(false, wrap), blockNumber],
      // The references, for this checkout only (they do not change with a commit).
      ...(refs.length ? [] : [
        ['floor with a cache hit\'s headers', (wrap) => startFloor(true, wrap), blockNumber],
        ['bare proxy (undici), eth_getBalance', (wrap) => startBareProxy(anvil.url, wrap), balance],
        ['bare proxy (one WebSocket), eth_getBalance', (wrap) => startBareWsProxy(anvil.url, wrap), balance],
      ] satisfies Array<[string, Start, string]>),
      ...nodegates.flatMap(({ label, root }): Array<[string, Start, string]> => [
        [`${label}, cache hit (eth_blockNumber)`, (wrap) => startNodegateTarget(anvil.url, { cache: true, wrap, root }), blockNumber],
        [`${label}, uncached eth_getBalance`, (wrap) => startNodegateTarget(anvil.url, { wrap, root }), balance],
      ]),
    ];
    for (let r = 0; r < RUNS; r++) {
      for (const [name, start, lua] of targets) {
        const c = await counted(start, lua, tmp, `${r}-${results.size}`);
        const perRequest = c.instructions / c.requests;
        results.set(name, [...(results.get(name) ?? []), perRequest]);
        console.log(`  ${name}: ${Math.round(perRequest).toLocaleString('en-US')} instructions a request (${c.requests} requests counted)`);
      }
    }
  } finally {
    await anvil.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
  const m = (name: string) => median(results.get(name)!);
  const floor = m('floor');
  const k = (v: number) => `${(v / 1000).toFixed(1)}k`;
  console.log(`\ninstructions a request (callgrind, main thread, user space; median of ${RUNS} runs of ${COUNTED} s after a warm-up to a steady rate; wrk -t1 -c${CONNECTIONS})`);
  printTable(['target', 'instructions a request', 'vs the floor', 'above the floor'], [...results.keys()].map((name) => [
    name, k(m(name)), `${(m(name) / floor).toFixed(2)}x`, name === 'floor' ? '' : `+${k(m(name) - floor)}`,
  ]));
}

/** One target under callgrind: started, warmed up, counted for COUNTED seconds of load, stopped. */
async function counted(start: (wrap: string[]) => Promise<Target>, lua: string, tmp: string, id: string): Promise<Counted> {
  const out = join(tmp, `callgrind-${id}`);
  const t = await start(['valgrind', '--quiet', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${out}`]);
  try {
    for (let i = 0, last = 0; i < 12; i++) {
      const w = await runWrk(t.url, lua, WINDOW, CONNECTIONS);
      if (i >= 2 && Math.abs(w.requests - last) <= 0.1 * last) break;
      last = w.requests;
    }
    control(t.pid, '-i', 'on');
    const r = await runWrk(t.url, lua, COUNTED, CONNECTIONS);
    control(t.pid, '-i', 'off');
    control(t.pid, '-d');
    // The dump's part 1 of thread 1, the main thread: `<out>.1-01`, whole once its last line (totals) is written.
    const file = `${out}.1-01`;
    let totals: RegExpExecArray | null = null;
    for (let waited = 0; !totals; waited += 100) {
      if (waited > 60_000) throw new Error(`no callgrind dump of ${t.name}'s main thread`);
      if (existsSync(file)) totals = /^totals: (\d+)$/m.exec(readFileSync(file, 'utf8'));
      if (!totals) await sleep(100);
    }
    if (r.failed > 0) throw new Error(`${t.name}: ${r.failed} requests failed while counted`);
    return { requests: r.requests, instructions: Number(totals[1]) };
  } finally {
    await t.stop();
  }
}

function control(pid: number, ...args: string[]): void {
  const r = spawnSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${args.join(' ')} ${pid}: ${r.stderr || r.stdout}`);
}
