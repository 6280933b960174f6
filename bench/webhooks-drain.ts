/**
 * RPC while webhooks drain: 20 `block.mined` webhooks, 1,000 blocks mined at once on the node,
 * and eth_blockNumber load on Nodegate while the 20,000 events are written and delivered, against the same load
 * on the same Nodegate quiet (before and after), and on the node directly. Every part is its own process: anvil,
 * Nodegate, the receiver (answers 200 and counts), and the load generator (wrk).
 *   npm run bench -- webhooks
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startNodegate } from '../test/helpers/process.ts';
import type { BenchTargets } from './bench-targets.ts';
import { DONE, wrk } from './wrk.ts';
import { cpuMicros, post, startAnvil, CHAIN_ID } from './targets.ts';

const HOOKS = Number(process.env.BENCH_HOOKS ?? 20);
const BLOCKS = 1000;
const CONNECTIONS = 16;
const WINDOW = 2;

interface Measured { rps: number; p50: number; p99: number; requests: number; failed: number; cpuUs: number }

/** A receiver in its own process: 200 to every POST, the count on GET. */
async function startReceiver(): Promise<{ url: string; count(): Promise<number>; stop(): void }> {
  const code = `
    const http = require('node:http'); let n = 0;
    const s = http.createServer((req, res) => { if (req.method === 'GET') return res.end(String(n)); req.resume().on('end', () => { n++; res.end(); }); });
    s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d) => resolve(Number(String(d).trim()))));
  const url = `http://127.0.0.1:${port}`;
  return {
    url: `${url}/hook`,
    count: async () => Number(await (await request(url)).body.text()),
    stop: () => child.kill(),
  };
}

export async function benchWebhooksDrain(_targets: BenchTargets): Promise<void> {
  const anvil = await startAnvil();
  const receiver = await startReceiver();
  const ng = await startNodegate({
    // BENCH_NODE_OPTIONS: e.g. --cpu-prof for the gateway process alone.
    env: { REDIS_URL: '', DATABASE_URL: '', NODEGATE_LOG_LEVEL: '', NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS ?? '' },
    config: {
      networks: { mainnet: { chainId: CHAIN_ID, upstream: anvil.url } },
      plans: { bench: { name: 'Bench', cuPerSecond: 1_000_000_000, cuPerMonth: 1_000_000_000_000_000, maxBatchSize: 1000, debugMethods: true, maxFilters: 100 } },
      accounts: { defaultPlan: 'bench' },
      cache: { enabled: false },
      webhooks: { allowPrivateTargets: true, pollMs: 50 },
    },
  });
  let dir: string | undefined;
  try {
    for (let i = 0; i < HOOKS; i++) {
      const r = await request(`${ng.url}/api/v1/webhooks`, {
        method: 'POST', headers: { authorization: `Bearer ${ng.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ network: 'mainnet', kind: 'block.mined', url: receiver.url }),
      });
      if (r.statusCode !== 201) throw new Error(`webhook not made: ${await r.body.text()}`);
      await r.body.dump();
    }
    const url = ng.rpcUrl('mainnet');
    dir = mkdtempSync(join(tmpdir(), 'nodegate-bench-'));
    const script = join(dir!, 'load.lua');
    writeFileSync(script, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'\n${DONE}`);
    const measured = async (target: string, pid: number, seconds: number): Promise<Measured> => {
      const c0 = cpuMicros(pid) ?? 0;
      const r = await wrk(target, script, seconds, CONNECTIONS);
      return { rps: r.requests / (r.us / 1e6), p50: r.p50 / 1000, p99: r.p99 / 1000, requests: r.requests, failed: r.errors, cpuUs: ((cpuMicros(pid) ?? 0) - c0) / Math.max(1, r.requests) };
    };
    await measured(url, ng.pid, 1); // warm-up
    const direct = await measured(anvil.url, anvil.pid, 4);
    const quiet = await measured(url, ng.pid, 4);

    const before = await receiver.count();
    const t0 = Date.now();
    await post(anvil.url, `{"jsonrpc":"2.0","id":1,"method":"anvil_mine","params":["0x${BLOCKS.toString(16)}"]}`);
    const windows: Measured[] = [];
    let delivered = 0;
    while (((delivered = (await receiver.count()) - before) < HOOKS * BLOCKS || windows.length < 3) && Date.now() - t0 < 300_000) windows.push(await measured(url, ng.pid, WINDOW));
    const drainS = (Date.now() - t0) / 1000;
    const after = await measured(url, ng.pid, 4);

    const n = windows.reduce((a, w) => a + w.requests, 0);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const during = {
      rps: windows.reduce((a, w) => a + w.rps, 0) / Math.max(1, windows.length),
      // The median window's p50 and p99 (the first windows also hold the events being written).
      p50: median(windows.map((w) => w.p50)), p99: median(windows.map((w) => w.p99)),
      cpuUs: windows.reduce((a, w) => a + w.cpuUs * w.requests, 0) / Math.max(1, n),
      failed: windows.reduce((a, w) => a + w.failed, 0),
    };
    const row = (name: string, r: { rps: number; p50: number; p99: number; cpuUs: number; failed?: number }) =>
      `  ${name.padEnd(34)} ${Math.round(r.rps).toLocaleString('en-US').padStart(7)} req/s  ${(r.rps / direct.rps).toFixed(2)}x direct  p50 ${r.p50} ms  p99 ${r.p99} ms  CPU ${Math.round(r.cpuUs)} µs/req${r.failed ? `  ${r.failed} FAILED` : ''}`;
    console.log(`\nwebhooks drain: ${HOOKS} webhooks × ${BLOCKS} blocks mined at once = ${HOOKS * BLOCKS} deliveries to a receiver in its own process; eth_blockNumber, uncached, wrk -t1 -c${CONNECTIONS}`);
    console.log(row('anvil directly', direct));
    console.log(row('Nodegate, quiet (before)', quiet));
    console.log(row(`Nodegate, while draining (${windows.length}×${WINDOW} s)`, during));
    console.log(row('Nodegate, quiet (after)', after));
    console.log(`  windows (req/s p50/p99 ms): ${windows.map((w) => `${Math.round(w.rps)} ${w.p50.toFixed(1)}/${w.p99.toFixed(1)}`).join(', ')}`);
    console.log(`  drained ${delivered} of ${HOOKS * BLOCKS} deliveries in ${drainS.toFixed(1)} s under that load (${Math.round(delivered / drainS)}/s); while draining / quiet: ${(during.rps / ((quiet.rps + after.rps) / 2)).toFixed(3)}x throughput`);
  } finally {
    await ng.stop('SIGTERM');
    rmSync(ng.dataDir, { recursive: true, force: true });
    if (dir) rmSync(dir, { recursive: true, force: true });
    receiver.stop();
    await anvil.stop();
  }
}
