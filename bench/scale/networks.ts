/**
 * The networks section of `npm run bench -- scale`: what idle networks cost in the background. Nodegate with 50
 * networks of 3 upstreams each (synthetic chains in a process of their own, a block every 2 s, as an L2 makes them),
 * and with 1 network of 3, no client calling: CPU of the Nodegate process over 30 s as a share of one core, its
 * RSS and its open sockets, and the calls the nodes got per second. The chains' hashes are made up, so the networks
 * are not verified (`verify: off`); their checks and head following are what is measured, once every network has
 * gone without a call for `upstreams.idleAfterMs`.
 *   npm run bench -- scale
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { startNodegate } from '../../test/helpers/process.ts';
import type { BenchTargets } from '../bench-targets.ts';
import { cpuMicros } from '../targets.ts';

const BLOCK_MS = 2000;
const IDLE_S = 30;
/** upstreams.idleAfterMs's default: networks nobody called for this long are idle. */
const IDLE_AFTER_MS = 30_000;
const SIZES = [1, 50];

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
const sockets = (pid: number) => readdirSync(`/proc/${pid}/fd`).filter((fd) => {
  try { return /^socket:/.test(readlinkSync(join(`/proc/${pid}/fd`, fd))); } catch { return false; }
}).length;

/** `n` synthetic chains in a child process; their URLs, and a way to read the calls they got and to stop them. */
async function startChains(n: number) {
  const script = `
    const { startSyntheticChain } = await import(${JSON.stringify(new URL('../../test/helpers/synthetic-chain.ts', import.meta.url).href)});
    const chains = [];
    for (let i = 0; i < ${n}; i++) chains.push(await startSyntheticChain({ head: 1000, blockMs: ${BLOCK_MS} }));
    process.stdout.write(JSON.stringify(chains.map((c) => c.url)) + '\\n');
    process.stdin.on('data', () => process.stdout.write(chains.reduce((s, c) => s + c.calls, 0) + '\\n'));
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let waiting: ((l: string) => void) | undefined;
  let text = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => {
    text += s;
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n')) {
      const line = text.slice(0, i);
      text = text.slice(i + 1);
      if (waiting) { const w = waiting; waiting = undefined; w(line); } else lines.push(line);
    }
  });
  const next = () => new Promise<string>((r) => { const l = lines.shift(); if (l !== undefined) r(l); else waiting = r; });
  const urls = JSON.parse(await next()) as string[];
  return {
    urls,
    calls: async () => { child.stdin!.write('\n'); return Number(await next()); },
    stop: () => child.kill('SIGTERM'),
  };
}

export async function scaleNetworks(_targets: BenchTargets): Promise<void> {
  const rows: string[] = [];
  for (const n of SIZES) {
    const chains = await startChains(n * 3);
    const networks = Object.fromEntries(Array.from({ length: n }, (_, i) => [`net${i}`, {
      chainId: 1, verify: 'off', upstreams: chains.urls.slice(i * 3, i * 3 + 3).map((url) => ({ url })),
    }]));
    const proc = await startNodegate({ env: { REDIS_URL: '', DATABASE_URL: '', NODEGATE_LOG_LEVEL: 'warn' }, config: { networks }, timeoutMs: 180_000 });
    try {
      // Every network answering, then idle (no call for upstreams.idleAfterMs, 30 s) before the time is measured.
      for (let i = 0; i < n; i++) await proc.call('eth_blockNumber', [], `net${i}`);
      await new Promise((r) => setTimeout(r, IDLE_AFTER_MS + 5000));
      const c0 = cpuMicros(proc.pid) ?? 0;
      const k0 = await chains.calls();
      const t0 = Date.now();
      await new Promise((r) => setTimeout(r, IDLE_S * 1000));
      const cpu = ((cpuMicros(proc.pid) ?? 0) - c0) / ((Date.now() - t0) * 1000);
      const perSecond = (await chains.calls() - k0) / IDLE_S;
      rows.push(`| ${n} | ${n * 3} | ${(cpu * 100).toFixed(2)} % | ${rssMiB(proc.pid).toFixed(0)} MiB | ${sockets(proc.pid)} | ${perSecond.toFixed(1)} |`);
    } finally {
      await proc.stop('SIGTERM');
      chains.stop();
    }
  }
  console.log(`\nIdle networks: a block every ${BLOCK_MS / 1000} s on each, no client, ${IDLE_S} s; CPU of the Nodegate process as a share of one core`);
  console.log('| networks | upstreams | background CPU | RSS | sockets | node calls/s |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
}
