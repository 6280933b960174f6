/**
 * What traces cost: eth_blockNumber through Nodegate with `tracing.enabled` false and with traces sampled at 1 %
 * (exported by OTLP/HTTP to a sink in this process that reads and drops them), in alternating rounds, as a ratio.
 * Printed with the gateway's CPU time per request (/proc/PID/stat across each round): on two shared cores the
 * steadier signal.
 *   npm run bench -- tracing-on-off
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchTargets } from './bench-targets.ts';
import { load } from './load.ts';
import { cpuMicros } from './targets.ts';
import { blockNumber } from './workloads.ts';

const ROUNDS = Number(process.env.TRACING_ROUNDS ?? 8);
const DURATION = 3;
const CONNECTIONS = 32;
const RATIO = Number(process.env.TRACING_RATIO ?? 0.01);

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
    const cpu: Record<'on' | 'off', number[]> = { on: [], off: [] };
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which goes first, so a drift of the machine's speed falls on both alike.
      const order = r % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      for (const which of order) {
        const target = which === 'on' ? on : off;
        const c0 = cpuMicros(target.pid) ?? 0;
        const res = await load(target.url, blockNumber(), { connections: CONNECTIONS, duration: DURATION });
        cpu[which].push(((cpuMicros(target.pid) ?? 0) - c0) / Math.max(1, res.requests));
        if (res.failed) console.error(`  tracing ${which}: ${res.failed} of ${res.requests} requests failed`);
        rounds[which].push(res.rps);
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    const fmt = (w: 'on' | 'off') => `${Math.round(mean(rounds[w])).toLocaleString('en-US')} req/s (rounds ${rounds[w].map((x) => Math.round(x).toLocaleString('en-US')).join(', ')}); CPU ${median(cpu[w]).toFixed(1)} µs/request median (rounds ${cpu[w].map((x) => x.toFixed(1)).join(', ')})`;
    console.log(`\ntracing at ${RATIO * 100} % vs off: eth_blockNumber through Nodegate, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION} s`);
    console.log(`  off:   ${fmt('off')}`);
    console.log(`  ${RATIO * 100} %:   ${fmt('on')}`);
    console.log(`  on / off: ${(mean(rounds.on) / mean(rounds.off)).toFixed(3)}x req/s, ${(median(cpu.on) / median(cpu.off)).toFixed(3)}x CPU per request; ${exports} OTLP exports received`);
  } finally {
    sink.close();
  }
}
