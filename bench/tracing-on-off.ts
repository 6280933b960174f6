/**
 * What traces cost: eth_blockNumber through three Nodegates in front of one anvil, with `tracing.enabled` false,
 * with tracing on and nothing sampled (what every request pays for tracing being on), and with traces sampled at
 * 1 % (exported by OTLP/HTTP to a sink in this process that reads and drops them), in rounds that rotate the order.
 * Printed as ratios against off, with the gateway's CPU time per request (/proc/PID/stat across each round): on two
 * shared cores the steadier signal. And one process where the caller decides (`tracing.followCallerSampled`): 1
 * request in 100 flagged sampled against none, the same process in both cells, so what differs is the traces alone.
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
    // The caller decides (tracing.followCallerSampled) in one process: every request carries a traceparent, 1 in
    // 100 with the sampled flag, against the same process with none flagged. Two targets of the same build differ by
    // 3-4 % on their own (their memory layout, their code's compilation); one process compared with itself does not.
    const unsampled = { traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-00` };
    const sampled = { traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01` };
    const caller = await targets.nodegateTraced(0, otlp, true);
    const variants: Array<[string, Target, Array<Record<string, string>>?]> = [
      ['off', await targets.nodegate()],
      ['on, 0 % sampled', await targets.nodegateTraced(0, otlp)],
      [`on, ${RATIO * 100} % sampled`, await targets.nodegateTraced(RATIO, otlp)],
      ['caller, 0 of 100', caller, Array.from({ length: 100 }, () => unsampled)],
      ['caller, 1 of 100', caller, Array.from({ length: 100 }, (_, i) => (i === 0 ? sampled : unsampled))],
    ];
    const rps = variants.map((): number[] => []);
    const cpu = variants.map((): number[] => []);
    for (let r = 0; r < ROUNDS; r++) {
      // Rotate which goes first, so a drift of the machine's speed falls on all alike.
      for (let k = 0; k < variants.length; k++) {
        const i = (r + k) % variants.length;
        const [name, target, headerCycle] = variants[i];
        const c0 = cpuMicros(target.pid) ?? 0;
        const res = await load(target.url, blockNumber(), { connections: CONNECTIONS, duration: DURATION, headerCycle });
        cpu[i].push(((cpuMicros(target.pid) ?? 0) - c0) / Math.max(1, res.requests));
        if (res.failed) console.error(`  tracing ${name}: ${res.failed} of ${res.requests} requests failed`);
        rps[i].push(res.rps);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    const n = (x: number) => Math.round(x).toLocaleString('en-US');
    /** Each round's ratio of cell `i` to cell `j`, their median: a drift between rounds falls on both. */
    const paired = (xs: number[][], i: number, j: number) => median(xs[i].map((x, r) => x / xs[j][r]));
    console.log(`\ntracing: eth_blockNumber through Nodegate, ${CONNECTIONS} connections, ${ROUNDS} rotating rounds of ${DURATION} s; medians`);
    variants.forEach(([name], i) => {
      const base = name.startsWith('caller') ? 3 : 0;
      const vs = i === base ? '' : `  → ${paired(rps, i, base).toFixed(3)}x req/s, ${paired(cpu, i, base).toFixed(3)}x CPU per request against ${variants[base][0]}`;
      console.log(`  ${name.padEnd(18)} ${n(median(rps[i]))} req/s, CPU ${median(cpu[i]).toFixed(1)} µs/request (rounds ${cpu[i].map((x) => x.toFixed(1)).join(', ')})${vs}`);
    });
    console.log(`  ${exports} OTLP exports received`);
  } finally {
    sink.close();
  }
}
