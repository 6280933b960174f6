/**
 * What the limit stage costs: eth_blockNumber through Nodegate with `limits.enabled` true
 * (per-second bucket and monthly quota, in memory) and false, in alternating rounds, as a ratio.
 *   npm run bench -- limits
 */
import type { BenchTargets } from './bench-targets.ts';
import { load } from './load.ts';
import { blockNumber } from './workloads.ts';

const ROUNDS = 3;
const DURATION = 3;
const CONNECTIONS = 32;

export async function benchLimitsOnOff(targets: BenchTargets): Promise<void> {
  const on = await targets.nodegate();
  const off = await targets.nodegateNoLimits();
  const total = { on: 0, off: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so a drift of the machine's speed falls on both alike.
    const order = r % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const);
    for (const which of order) {
      const res = await load((which === 'on' ? on : off).url, blockNumber(), { connections: CONNECTIONS, duration: DURATION });
      if (res.failed) console.error(`  limits ${which}: ${res.failed} of ${res.requests} requests failed`);
      total[which] += res.rps / ROUNDS;
    }
  }
  console.log(`\nlimits on vs off: eth_blockNumber through Nodegate, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION} s`);
  console.log(`  limits on:   ${Math.round(total.on).toLocaleString('en-US')} req/s`);
  console.log(`  limits off:  ${Math.round(total.off).toLocaleString('en-US')} req/s`);
  console.log(`  on / off:    ${(total.on / total.off).toFixed(3)}x`);
}
