/**
 * What usage recording costs (issue 12: throughput within 5 % of recording off): eth_getBalance of distinct
 * addresses through Nodegate with `analytics` and `metrics` on (the default) and off, in alternating rounds, as a
 * ratio, with the CPU per request of each.
 *   npm run bench -- analytics
 */
import type { BenchTargets } from './bench-targets.ts';
import { load } from './load.ts';
import { cpuMicros } from './targets.ts';
import { balanceDistinct } from './workloads.ts';

const ROUNDS = 6;
const DURATION = 4;
const CONNECTIONS = 32;

export async function benchAnalyticsOnOff(targets: BenchTargets): Promise<void> {
  const on = await targets.nodegate();
  const off = await targets.nodegateNoAnalytics();
  const total = { on: { rps: 0, cpu: 0, n: 0 }, off: { rps: 0, cpu: 0, n: 0 } };
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so a drift of the machine's speed falls on both alike.
    const order = r % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const);
    for (const which of order) {
      const t = which === 'on' ? on : off;
      const cpu0 = cpuMicros(t.pid!) ?? 0;
      const res = await load(t.url, balanceDistinct(), { connections: CONNECTIONS, duration: DURATION });
      const cpu1 = cpuMicros(t.pid!) ?? 0;
      if (res.failed) console.error(`  analytics ${which}: ${res.failed} of ${res.requests} requests failed`);
      total[which].rps += res.rps / ROUNDS;
      total[which].cpu += cpu1 - cpu0;
      total[which].n += res.requests;
    }
  }
  const per = (w: 'on' | 'off') => (total[w].cpu / total[w].n).toFixed(0);
  console.log(`\nanalytics on vs off: eth_getBalance of distinct addresses through Nodegate, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION} s`);
  console.log(`  recording on:   ${Math.round(total.on.rps).toLocaleString('en-US')} req/s, ${per('on')} µs CPU per request`);
  console.log(`  recording off:  ${Math.round(total.off.rps).toLocaleString('en-US')} req/s, ${per('off')} µs CPU per request`);
  console.log(`  on / off:       ${(total.on.rps / total.off.rps).toFixed(3)}x throughput`);
}
