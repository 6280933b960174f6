/**
 * What usage recording costs (the bar: throughput within 5 % of recording off):
 *   npm run bench -- analytics
 *   ANALYTICS_ROUNDS=24 ANALYTICS_SECONDS=3 npm run bench -- analytics      (more or longer rounds)
 *
 * Three Nodegate processes on the same anvil, started alike and warmed up alike: ON with `analytics` and `metrics`
 * on (the default), OFF and OFF' with both off. The load generator is `wrk` (native, its own process, 1 thread,
 * 32 connections). Each round loads each process in turn for a few seconds, the order rotating through all six
 * permutations so that every process takes every position equally often; per round the bench takes ON / OFF
 * (the cost of recording) and OFF' / OFF (an A/A control: two identical processes, i.e. the noise), and prints
 * the median and range over the rounds, with the CPU time each process used per request (utime + stime from
 * /proc/PID/stat, across the same windows). On a 2-core machine CPU per request is the steadier signal.
 *
 * Two workloads: `eth_chainId` with the response cache on (every answer a cache hit: the gateway alone is the
 * bottleneck, and recording is the largest share of a request it can ever be), and `eth_getBalance` of a distinct
 * address per request with the cache off (every request goes to anvil: recording's cost next to a node's answer).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchTargets } from './bench-targets.ts';
import { cpuMicros, post, startNodegateTarget, type Target } from './targets.ts';
import { DONE, wrk as wrkRun } from './wrk.ts';

const ROUNDS = Number(process.env.ANALYTICS_ROUNDS ?? 12);
const SECONDS = Number(process.env.ANALYTICS_SECONDS ?? 2);
const CONNECTIONS = 32;
const WARMUP_SECONDS = 3;
const wrk = (url: string, script: string, seconds: number) => wrkRun(url, script, seconds, CONNECTIONS);

interface Workload { name: string; cache: boolean; lua: string; check: string }

const WORKLOADS: Workload[] = [
  {
    name: 'eth_chainId, cache on (gateway only)',
    cache: true,
    check: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
    lua: `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'
${DONE}`,
  },
  {
    name: 'eth_getBalance distinct addresses, cache off (anvil behind)',
    cache: false,
    check: '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest"]}',
    lua: `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
math.randomseed(os.time())
local n = math.random(1, 2000000000)
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, string.format('{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x%040x","latest"]}', n))
end
${DONE}`,
  },
];

const PERMUTATIONS = [[0, 1, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0], [0, 2, 1], [1, 0, 2]];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const range = (xs: number[], f: (x: number) => string) => `${f(Math.min(...xs))}-${f(Math.max(...xs))}`;

export async function benchAnalyticsOnOff(targets: BenchTargets): Promise<void> {
  const anvil = await targets.anvil();
  const dir = mkdtempSync(join(tmpdir(), 'nodegate-bench-'));
  try {
    for (const w of WORKLOADS) await benchWorkload(anvil.url, w, join(dir, 'load.lua'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchWorkload(upstream: string, w: Workload, script: string): Promise<void> {
  writeFileSync(script, w.lua);
  const names = ['ON', 'OFF', "OFF'"] as const;
  const procs: Target[] = [];
  const started = () => procs.filter(Boolean);
  try {
    // Started one after the other, alike, ON between OFF and OFF' (should the order of starting matter, the A/A
    // control shows it at least as strongly as ON / OFF).
    for (const i of [1, 0, 2]) procs[i] = await startNodegateTarget(upstream, { cache: w.cache, analytics: i === 0 });
    for (const p of procs) {
      const a = await post(p.url, w.check);
      if (!a.result) throw new Error(`${p.name}: ${JSON.stringify(a)}`);
      await wrk(p.url, script, WARMUP_SECONDS); // JIT, keep-alive pools, caches: nothing is measured cold
    }
    const rps: number[][] = [[], [], []];
    const cpu: number[][] = [[], [], []];
    const lat: number[][] = [[], [], []];
    let failed = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const i of PERMUTATIONS[r % PERMUTATIONS.length]) {
        const c0 = cpuMicros(procs[i].pid) ?? NaN;
        const res = await wrk(procs[i].url, script, SECONDS);
        const c1 = cpuMicros(procs[i].pid) ?? NaN;
        failed += res.errors;
        rps[i].push(res.requests / (res.us / 1e6));
        cpu[i].push((c1 - c0) / res.requests);
        lat[i].push(res.p50);
      }
    }
    const onOff = rps[0].map((x, r) => x / rps[1][r]);
    const aa = rps[2].map((x, r) => x / rps[1][r]);
    const cpuOnOff = cpu[0].map((x, r) => x / cpu[1][r]);
    const cpuAa = cpu[2].map((x, r) => x / cpu[1][r]);
    const f3 = (x: number) => x.toFixed(3);
    const f0 = (x: number) => x.toFixed(0);
    console.log(`\nanalytics on vs off: ${w.name}; wrk -t1 -c${CONNECTIONS}, ${ROUNDS} rounds of ${SECONDS} s per process, order rotating`);
    for (let i = 0; i < 3; i++) {
      console.log(`  ${names[i].padEnd(5)} recording ${i === 0 ? 'on ' : 'off'}: median ${Math.round(median(rps[i])).toLocaleString('en-US').padStart(6)} req/s (${range(rps[i], (x) => Math.round(x).toLocaleString('en-US'))}), ` +
        `CPU ${f0(median(cpu[i])).padStart(3)} µs/request (${range(cpu[i], f0)}), p50 ${f0(median(lat[i]))} µs`);
    }
    console.log(`  throughput ON / OFF:   median ${f3(median(onOff))}x  (rounds ${range(onOff, f3)})`);
    console.log(`  throughput OFF'/ OFF:  median ${f3(median(aa))}x  (rounds ${range(aa, f3)})   <- A/A control`);
    console.log(`  CPU/request ON / OFF:  median ${f3(median(cpuOnOff))}x  (rounds ${range(cpuOnOff, f3)}), ${(median(cpu[0]) - median(cpu[1])).toFixed(1)} µs more`);
    console.log(`  CPU/request OFF'/ OFF: median ${f3(median(cpuAa))}x  (rounds ${range(cpuAa, f3)})   <- A/A control`);
    if (failed) console.log(`  ${failed} socket errors or non-2xx answers (wrk)`);
    console.log(`  per round ON/OFF: ${onOff.map(f3).join(' ')};  OFF'/OFF: ${aa.map(f3).join(' ')}`);
  } finally {
    await Promise.all(started().map((p) => p.stop().catch((err) => console.error(`stopping ${p.name}:`, err))));
  }
}
