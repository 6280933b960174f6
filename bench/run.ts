/**
 * `npm run bench [-- NAME...]`: runs the benchmarks (all, or those whose name contains NAME) and prints their tables.
 * `npm run bench -- compare <before-ref> [<after-ref>]`: two commits side by side (bench/compare.ts).
 * `npm run bench -- instructions`: instructions a request, counted by callgrind (bench/instructions.ts; only when named).
 * Speed lives here, not in the tests: these numbers are measured, printed and compared, never asserted.
 * The RPC benchmarks share one anvil and the processes in front of it (bench/bench-targets.ts); docs/performance.md
 * explains the numbers.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { benchAddedLatency } from './added-latency.ts';
import { BenchTargets } from './bench-targets.ts';
import { benchKeyResolution } from './key-resolution.ts';
import { benchLimitsOnOff } from './limits-on-off.ts';
import { benchAnalyticsOnOff } from './analytics-on-off.ts';
import { benchTracingOnOff } from './tracing-on-off.ts';
import { benchRpcThroughput } from './rpc-throughput.ts';
import { benchWebhooksDrain } from './webhooks-drain.ts';
import { benchFiltersMemory } from './filters-memory.ts';
import { benchFraming } from './framing.ts';
import { benchWebsocket } from './websocket.ts';
import { benchHeads } from './heads.ts';
import { benchWorkers } from './workers.ts';
import { benchHotPath } from './hot-path.ts';
import { benchInstructions } from './instructions.ts';
import { benchScale } from './scale/index.ts';

const benches: Record<string, (targets: BenchTargets) => Promise<void>> = {
  'hot-path': benchHotPath,
  'rpc-throughput': benchRpcThroughput,
  'added-latency': benchAddedLatency,
  'limits-on-off': benchLimitsOnOff,
  'analytics-on-off': benchAnalyticsOnOff,
  'tracing-on-off': benchTracingOnOff,
  'key-resolution': benchKeyResolution,
  'webhooks-drain': benchWebhooksDrain,
  'filters-memory': () => benchFiltersMemory(),
  framing: () => benchFraming(),
  websocket: benchWebsocket,
  heads: () => benchHeads(),
  workers: benchWorkers,
  scale: benchScale,
  instructions: () => benchInstructions(wanted[0] === 'instructions' ? wanted.slice(1) : []),
};
/**
 * Run only when named: the instruction count runs each target under valgrind, some ten minutes; scale builds a
 * million keys in PostgreSQL.
 */
const OPT_IN = new Set(['instructions', 'scale']);

const wanted = process.argv.slice(2);
if (wanted[0] === 'compare') {
  // Two commits side by side (bench/compare.ts), with targets of its own: not one of the benches above.
  const { compare } = await import('./compare.ts');
  await compare(wanted.slice(1));
  process.exit(0);
}
// The load generator is wrk (Debian's: native, its own process): said plainly when it is missing, before anything starts.
if (spawnSync('wrk', ['--version']).error) {
  console.error('npm run bench needs wrk, the load generator (native, run in its own process): apt-get install wrk');
  process.exit(1);
}
// Nodegate as `npm start` runs it: built (scripts/build.mjs), not the source through tsx. The
// benchmarks' Nodegates run this build (test/helpers/process.ts cliCommand reads NODEGATE_TEST_BUILD).
const build = join('.tmp', `bench-build-${process.pid}`);
if (spawnSync(process.execPath, ['scripts/build.mjs', build], { stdio: 'inherit' }).status !== 0) throw new Error('the build for the benchmarks failed');
process.env.NODEGATE_TEST_BUILD = resolve(build);
process.on('exit', () => rmSync(build, { recursive: true, force: true }));
const targets = new BenchTargets();
const stop = () => void targets.close().finally(() => process.exit(130));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
const t0 = Date.now();
try {
  for (const [name, run] of Object.entries(benches)) {
    if (wanted.length ? !wanted.some((w) => name.includes(w)) : OPT_IN.has(name)) continue;
    await run(targets);
  }
} finally {
  await targets.close();
}
console.log(`\n(${((Date.now() - t0) / 1000).toFixed(0)} s)`);
