/**
 * The sockets section of `npm run bench -- scale`: memory per idle WebSocket, per subscription and per filter.
 * Nodegate in front of anvil (one key, its plan's socket and filter limits raised, no per-address connection cap);
 * 10,000 WebSockets opened from this process, then each subscribes to newHeads, then 10,000 block filters made over
 * HTTP: the RSS of the Nodegate process after each step (after the collector has run: `--expose-gc` is not given to
 * it, so each figure is taken once RSS has stopped moving for 2 s).
 *   SCALE_SECTIONS=sockets npm run bench -- scale
 */
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { startNodegate } from '../../test/helpers/process.ts';
import type { BenchTargets } from '../bench-targets.ts';
import { CHAIN_ID } from '../targets.ts';

const SOCKETS = 10_000;
const FILTERS = 10_000;
/** Sockets opened at once (the rest wait their turn). */
const OPENING = 200;

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

/** RSS once it has settled (two readings a second apart within 1 MiB), at most 20 s. */
async function settledRss(pid: number): Promise<number> {
  let last = rssMiB(pid);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = rssMiB(pid);
    if (Math.abs(now - last) < 1) return now;
    last = now;
  }
  return last;
}

export async function scaleSockets(targets: BenchTargets): Promise<void> {
  const anvil = await targets.anvil();
  const plan = { name: 'Scale', cuPerSecond: 1_000_000_000, cuPerMonth: 1_000_000_000_000_000, maxBatchSize: 1000, debugMethods: true, maxFilters: FILTERS * 2, subscriptionsPerKey: SOCKETS * 2, subscriptionsPerAccount: SOCKETS * 2 };
  const proc = await startNodegate({
    env: { REDIS_URL: '', DATABASE_URL: '', NODEGATE_LOG_LEVEL: 'warn' },
    config: {
      networks: { mainnet: { chainId: CHAIN_ID, upstream: anvil.url } },
      plans: { scale: plan },
      accounts: { defaultPlan: 'scale' },
      server: { maxConnections: SOCKETS * 2, maxConnectionsPerIp: 0, maxConnectionsPerSubnet: 0 },
    },
  });
  const open: WebSocket[] = [];
  try {
    const wsUrl = proc.rpcUrl('mainnet').replace(/^http/, 'ws');
    await proc.call('eth_blockNumber');
    const idle = await settledRss(proc.pid);
    for (let i = 0; i < SOCKETS; i += OPENING) {
      await Promise.all(Array.from({ length: Math.min(OPENING, SOCKETS - i) }, () => new Promise<void>((resolve, reject) => {
        const ws = new WebSocket(wsUrl);
        ws.once('open', () => { open.push(ws); resolve(); });
        ws.once('error', reject);
      })));
    }
    const withSockets = await settledRss(proc.pid);
    let subscribed = 0;
    await Promise.all(open.map((ws, i) => new Promise<void>((resolve) => {
      ws.once('message', (d) => { if (typeof JSON.parse(String(d)).result === 'string') subscribed++; resolve(); });
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_subscribe', params: ['newHeads'] }));
    })));
    const withSubscriptions = await settledRss(proc.pid);
    let filters = 0;
    for (let i = 0; i < FILTERS; i += 100) {
      const answers = await proc.batch(Array.from({ length: 100 }, () => ['eth_newBlockFilter', []] as [string, unknown[]]));
      filters += answers.filter((a) => typeof a.result === 'string').length;
    }
    const withFilters = await settledRss(proc.pid);
    const per = (mib: number, n: number) => `${((mib * 1024) / Math.max(1, n)).toFixed(1)} KiB`;
    console.log(`\nSockets: ${open.length} WebSockets, ${subscribed} newHeads subscriptions, ${filters} block filters; RSS of the Nodegate process, settled`);
    console.log('| step | RSS | added | each |');
    console.log('|---|---:|---:|---:|');
    console.log(`| idle | ${idle.toFixed(0)} MiB | | |`);
    console.log(`| ${open.length} idle WebSockets | ${withSockets.toFixed(0)} MiB | +${(withSockets - idle).toFixed(0)} MiB | ${per(withSockets - idle, open.length)} a socket |`);
    console.log(`| each subscribed to newHeads | ${withSubscriptions.toFixed(0)} MiB | +${(withSubscriptions - withSockets).toFixed(0)} MiB | ${per(withSubscriptions - withSockets, subscribed)} a subscription |`);
    console.log(`| ${filters} block filters | ${withFilters.toFixed(0)} MiB | +${(withFilters - withSubscriptions).toFixed(0)} MiB | ${per(withFilters - withSubscriptions, filters)} a filter |`);
  } finally {
    for (const ws of open) ws.terminate();
    await proc.stop('SIGTERM');
  }
}
