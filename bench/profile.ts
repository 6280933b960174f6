/**
 * A CPU profile of Nodegate under load, for finding what a request costs (docs/performance.md):
 *   node --import tsx bench/profile.ts [blockNumber|balance|call|batch] [seconds]
 * starts anvil and a Nodegate child in front of it (as `npm run bench` does), warms it up, samples it while
 * autocannon loads it, and writes nodegate-TIME.cpuprofile here (open it in Chrome DevTools or speedscope).
 * Samples are wall-clock: on a loaded 2-core machine time in `writev` is mostly waiting for a CPU after waking
 * the peer, so read the JavaScript frames relative to each other.
 */
import { resolve } from 'node:path';
import { load } from './load.ts';
import { startAnvil, startNodegateTarget } from './targets.ts';
import { balanceDistinct, batch10, blockNumber, ethCall } from './workloads.ts';

const workloads = { blockNumber, balance: balanceDistinct, call: ethCall, batch: batch10 };
const name = (process.argv[2] ?? 'balance') as keyof typeof workloads;
const seconds = Number(process.argv[3] ?? 10);
if (!workloads[name]) throw new Error(`workload: one of ${Object.keys(workloads).join(', ')}`);

const anvil = await startAnvil();
const file = resolve(`nodegate-${Date.now()}.cpuprofile`);
process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import ${resolve('bench/cpu-profile.mjs')}`;
process.env.NODEGATE_CPU_PROFILE = file;
try {
  const ng = await startNodegateTarget(anvil.url);
  try {
    await load(ng.url, workloads[name](), { connections: 32, duration: 3 });
    process.kill(ng.pid, 'SIGUSR2');
    const r = await load(ng.url, workloads[name](), { connections: 32, duration: seconds });
    console.log(`${name}: ${Math.round(r.rps)} req/s while profiling (${r.failed} failed)`);
  } finally {
    await ng.stop();
  }
} finally {
  await anvil.stop();
}
console.log(`profile: ${file}`);
