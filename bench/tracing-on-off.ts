/**
 * What traces cost: eth_blockNumber through three Nodegates in front of one anvil, with `tracing.enabled` false,
 * with tracing on and nothing sampled (what every request pays for tracing being on), and with traces sampled at
 * 1 % (exported by OTLP/HTTP to a sink in this process that reads and drops them), in rounds that rotate the order.
 * Printed as ratios against off, with the gateway's CPU time per request (/proc/PID/stat across each round): on two
 * shared cores the steadier signal.
 *   npm run bench -- tracing-on-off        (TRACING_ROUNDS, TRACING_RATIO to change the defaults: 9, 0.01)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchTargets } from './bench-targets.ts';
import { load } from './load.ts';
import { cpuMicros, type Target } from './targets.ts';
import { blockNumber } from './workloads.ts';

const ROUNDS = Number(process.env.TRACING_ROUNDS ?? 9);
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
    const otlp = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/v1/traces`;
    const variants: Array<[string, Target]> = [
      ['off', await targets.nodegate()],
      ['on, 0 % sampled', await targets.nodegateTraced(0, otlp)],
      [`on, ${RATIO * 100} % sampled`, await targets.nodegateTraced(RATIO, otlp)],
    ];
    const rps = variants.map((): number[] => []);
    const cpu = variants.map((): number[] => []);
    for (let r = 0; r < ROUNDS; r++) {
      // Rotate which goes first, so a drift of the machine's speed falls on all alike.
      for (let k = 0; k < variants.length; k++) {
        const i = (r + k) % variants.length;
        const target = variants[i][1];
        const c0 = cpuMicros(target.pid) ?? 0;
        const res = await load(target.url, blockNumber(), { connections: CONNECTIONS, duration: DURATION });
        cpu[i].push(((cpuMicros(target.pid) ?? 0) - c0) / Math.max(1, res.requests));
        if (res.failed) console.error(`  tracing ${variants[i][0]}: ${res.failed} of ${res.requests} requests failed`);
        rps[i].push(res.rps);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    const n = (x: number) => Math.round(x).toLocaleString('en-US');
    console.log(`\ntracing: eth_blockNumber through Nodegate, ${CONNECTIONS} connections, ${ROUNDS} rotating rounds of ${DURATION} s; medians`);
    variants.forEach(([name], i) => {
      const vsOff = i === 0 ? '' : `  → ${(median(rps[i]) / median(rps[0])).toFixed(3)}x req/s, ${(median(cpu[i]) / median(cpu[0])).toFixed(3)}x CPU per request`;
      console.log(`  ${name.padEnd(18)} ${n(median(rps[i]))} req/s, CPU ${median(cpu[i]).toFixed(1)} µs/request (rounds ${cpu[i].map((x) => x.toFixed(1)).join(', ')})${vsOff}`);
    });
    console.log(`  ${exports} OTLP exports received`);
  } finally {
    sink.close();
  }
}
