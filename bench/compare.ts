/**
 * Throughput of two commits side by side (to show that a change loses no throughput):
 *   npm run bench -- compare <before-ref> [<after-ref>]      (after: HEAD when absent)
 *   npm run bench -- compare A B C ... [--only=WORD] [--rounds=N]   (several commits, e.g. to find which one did it;
 *                                                               only the workloads whose name contains WORD)
 *   npm run bench -- compare A B --cache                      (each Nodegate with its response cache on: the
 *                                                               eth_blockNumber row is then a cache hit)
 *   npm run bench -- compare A B --built                      (each commit built, run as `npm start` runs it, not
 *                                                               from its source through tsx; the two can differ)
 *   npm run bench -- compare --clean                          (removes the kept worktrees)
 * Each commit runs from its own worktree (bench/worktree.ts), so uncommitted edits in this checkout are not
 * measured. One anvil, and in front of it a Nodegate of each commit with the same configuration (response cache
 * off, limits on in memory, SQLite store, the demo key on a plan too generous to refuse; bench/targets.ts). The
 * load generator is wrk (native, its own process, 1 thread, 32 connections) with the workloads of
 * bench/workloads.ts (bench/wrk-scripts.ts). The three targets take turns: in each round every workload runs on
 * each target, the order rotating from round to round, so a drift of the machine's speed falls on all alike; the
 * table gives medians over the rounds, × anvil and after / before as the median of each round's own ratio (with
 * the rounds' range), and the CPU each target's process used per request (/proc). About 4 minutes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { anvilVersion, DEV_ACCOUNTS, startAnvil, startNodegateTarget, type Target } from './targets.ts';
import { printTable } from './rpc-throughput.ts';
import { SignedTransactions } from './workloads.ts';
import { measure, measureSends, median, runWrk, type Cell } from './wrk-cells.ts';
import { built, checkout, describeCommit, removeCheckouts, resolveCommit } from './worktree.ts';
import { READS, sendScript, writeScript, type WrkWorkload } from './wrk-scripts.ts';

const DEFAULT_ROUNDS = 3;
/** Seconds per measured read cell; each target gets WARMUP seconds of every workload before the first round. */
const SECONDS = 3;
const WARMUP = 1;
const CONNECTIONS = 32;
/** Transactions per send cell, from accounts of its own (anvil funds 40 accounts, shared out among the cells). */
const TXS = 1000;
const SEND = `eth_sendRawTransaction (${TXS} per cell)`;

export async function compare(args: string[]): Promise<void> {
  if (args.includes('--clean')) return removeCheckouts();
  const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const rounds = Number(option('rounds') ?? DEFAULT_ROUNDS);
  const only = option('only');
  const cache = args.includes('--cache');
  const builtRuns = args.includes('--built');
  const refs = args.filter((a) => !a.startsWith('--'));
  if (!refs.length) throw new Error('usage: npm run bench -- compare <before-ref> [<after-ref> ...] [--only=WORD] [--rounds=N] [--cache] [--built]   (or --clean)');
  if (refs.length === 1) refs.push('HEAD');
  const shas = refs.map(resolveCommit);
  const dirs = shas.map(checkout);
  const builds = builtRuns ? dirs.map((dir, i) => built(dir, shas[i])) : undefined;
  const reads = READS.filter((w) => !only || w.name.includes(only));
  const sends = !only || SEND.includes(only);
  const accounts = Math.floor(DEV_ACCOUNTS / ((shas.length + 1) * rounds));
  if (sends && accounts < 1) throw new Error(`too many cells for ${DEV_ACCOUNTS} funded accounts: fewer commits or rounds, or --only`);
  const tmp = mkdtempSync(join(tmpdir(), 'nodegate-compare-'));
  const load0 = loadavg();
  const t0 = Date.now();

  // Signed before anything runs: signing (~1.5 ms each) must not compete with the targets for the CPU.
  const signer = new SignedTransactions();
  const txFiles: string[][] = [];
  for (let r = 0; r < rounds && sends; r++) {
    txFiles.push([]);
    for (let i = 0; i <= shas.length; i++) {
      const file = join(tmp, `txs-${r}-${i}.txt`);
      writeFileSync(file, (await signer.take(TXS, accounts)).join('\n') + '\n');
      txFiles[r].push(file);
    }
  }

  const targets: Target[] = [];
  const stop = async () => {
    await Promise.all(targets.filter((t) => t.name !== 'anvil').map((t) => t.stop().catch(() => {})));
    await Promise.all(targets.filter((t) => t.name === 'anvil').map((t) => t.stop().catch(() => {})));
    rmSync(tmp, { recursive: true, force: true });
  };
  const interrupted = () => void stop().finally(() => process.exit(130));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    const anvil = await startAnvil();
    targets.push(anvil);
    for (const [i, sha] of shas.entries()) {
      const role = i === 0 ? 'before ' : i === shas.length - 1 ? 'after ' : '';
      targets.push(await startNodegateTarget(anvil.url, { root: dirs[i], build: builds?.[i], cache, name: `${role}${sha.slice(0, 7)}` }));
    }

    let offset = Math.floor(Math.random() * 2 ** 40);
    const script = (w: WrkWorkload) => writeScript(join(tmp, 'read.lua'), w.script((offset += 10_000_000)));
    for (const t of targets) for (const w of reads) await runWrk(t.url, script(w), WARMUP, CONNECTIONS);

    // cells[workload][target][round]
    const names = [...reads.map((w) => w.name), ...(sends ? [SEND] : [])];
    const cells: Cell[][][] = names.map(() => targets.map(() => []));
    for (let r = 0; r < rounds; r++) {
      const order = targets.map((_, i) => (i + r) % targets.length);
      for (const [wi, w] of reads.entries()) {
        for (const ti of order) cells[wi][ti].push(await measure(targets[ti], script(w), SECONDS, CONNECTIONS));
      }
      for (const ti of sends ? order : []) {
        cells[reads.length][ti].push(await measureSends(targets[ti], writeScript(join(tmp, 'send.lua'), sendScript(txFiles[r][ti])), CONNECTIONS));
      }
      console.log(`  round ${r + 1} of ${rounds} done (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    }

    console.log('');
    for (const sha of shas) console.log(describeCommit(sha));
    console.log(`wrk -t1 -c${CONNECTIONS}, ${rounds} rounds, ${SECONDS} s per read cell after ${WARMUP} s of warm-up, targets in rotating order; `
      + `anvil ${anvilVersion()}, Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()} shared by wrk, anvil and both Nodegates; `
      + `load average ${load0[0].toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end`
      + (cache ? '; response cache on in every Nodegate (eth_blockNumber and one-address rows are cache hits)' : '')
      + (builtRuns ? '; each commit built (scripts/build.mjs), as npm start runs it' : '; each commit from its source, through tsx'));
    const head = ['workload', ...targets.flatMap((t, i) => [`${t.name} req/s`, 'p50', 'p99', ...(i ? ['× anvil'] : []), 'cpu µs']), 'after/before req/s (rounds)', 'cpu'];
    printTable(head, names.map((name, wi) => {
      const a = cells[wi][0], b = cells[wi][1], c = cells[wi][targets.length - 1];
      const cols = [name];
      for (const [ti, runs] of cells[wi].entries()) {
        const failed = runs.reduce((s, x) => s + x.failed, 0);
        cols.push(Math.round(median(runs.map((x) => x.rps))).toLocaleString('en-US') + (failed ? ` (${failed} failed)` : ''));
        cols.push(ms(median(runs.map((x) => x.p50))), ms(median(runs.map((x) => x.p99))));
        if (ti) cols.push(`${median(runs.map((x, r) => x.rps / a[r].rps)).toFixed(2)}x`);
        cols.push(cpu(runs));
      }
      const ratios = c.map((x, r) => x.rps / b[r].rps);
      const cpuB = median(b.flatMap((x) => (x.cpuUs === undefined ? [] : [x.cpuUs])));
      const cpuC = median(c.flatMap((x) => (x.cpuUs === undefined ? [] : [x.cpuUs])));
      cols.push(`${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`);
      cols.push(Number.isFinite(cpuC / cpuB) ? `${(cpuC / cpuB).toFixed(2)}x` : '?');
      return cols;
    }));
    console.log('medians over the rounds; p50/p99 in ms (wrk); × anvil and after/before: median of each round\'s ratio; cpu µs: CPU time of the');
    console.log('target process per request (anvil: all its threads), from /proc; batch: 10 JSON-RPC items per HTTP request.');
    console.log(`(${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await stop();
  }
}

const ms = (us: number) => (us / 1000).toFixed(1);

function cpu(runs: Cell[]): string {
  const xs = runs.flatMap((x) => (x.cpuUs === undefined ? [] : [x.cpuUs]));
  return xs.length ? median(xs).toFixed(0) : '?';
}
