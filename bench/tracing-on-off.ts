/**
 * What traces cost: eth_blockNumber through Nodegate with `tracing.enabled` false and with traces sampled at 1 %
 * (exported by OTLP/HTTP to a sink in this process that reads and drops them), in alternating rounds, as a ratio.
 * At the same connections the gateway's CPU is saturated, so the ratio of rates is the CPU per request.
 *   npm run bench -- tracing-on-off
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchTargets } from './bench-targets.ts';
import { load } from './load.ts';
import { blockNumber } from './workloads.ts';

const ROUNDS = 4;
const DURATION = 3;
const CONNECTIONS = 32;
const RATIO = 0.01;

export async function benchTracingOnOff(targets: BenchTargets): Promise<void> {
  let exports = 0;
  const sink = createServer((req, res) => {
    req.resume().on('end', () => { exports++; res.end('{}'); });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  try {
    const off = await targets.nodegate();
    const on = await targets.nodegateTraced(RATIO, `http://127.0.0.1:${(sink.address() as AddressInfo).port}/v1/traces`);
    const rounds: Record<'on' | 'off', number[]> = { on: [], off: [] };
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which goes first, so a drift of the machine's speed falls on both alike.
      const order = r % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      for (const which of order) {
        const res = await load((which === 'on' ? on : off).url, blockNumber(), { connections: CONNECTIONS, duration: DURATION });
        if (res.failed) console.error(`  tracing ${which}: ${res.failed} of ${res.requests} requests failed`);
        rounds[which].push(res.rps);
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const fmt = (xs: number[]) => `${Math.round(mean(xs)).toLocaleString('en-US')} req/s (rounds ${xs.map((x) => Math.round(x).toLocaleString('en-US')).join(', ')})`;
    console.log(`\ntracing at ${RATIO * 100} % vs off: eth_blockNumber through Nodegate, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION} s`);
    console.log(`  off:       ${fmt(rounds.off)}`);
    console.log(`  ${RATIO * 100} %:       ${fmt(rounds.on)}`);
    console.log(`  on / off:  ${(mean(rounds.on) / mean(rounds.off)).toFixed(3)}x; ${exports} OTLP exports received`);
  } finally {
    sink.close();
  }
}
