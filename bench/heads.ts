/**
 * `npm run bench -- heads`: how long after a node's own subscriber a newHeads subscriber of Nodegate hears a block,
 * over a pool of three anvils (one genesis, each block at its parent's time + 1 s: the same evm_mine on each makes the
 * same block). This process subscribes to newHeads straight on the third anvil and through Nodegate, then mines
 * BLOCKS blocks (evm_mine on every live node at once, one every INTERVAL_MS); the first node, the one Nodegate reads
 * blocks from, is killed (SIGKILL) after half of them. Each block's delay is the time Nodegate's subscriber read it
 * minus the time the direct subscriber did (one process, one clock). Printed: median and p99 of the delay, heads
 * missed, repeated and out of order, for two Nodegates in the same run: one given each node's WebSocket
 * (upstreams[].ws: the nodes' pushes) and one without (the rounds of checks, every upstreams.checkIntervalMs, 500 ms).
 * BLOCKS=200 INTERVAL_MS=100 by default.
 */
import WebSocket from 'ws';
import { startAnvil, type TestAnvil } from '../test/helpers/anvil.ts';
import { startNodegate } from '../test/helpers/process.ts';

const BLOCKS = Number(process.env.BLOCKS ?? 200);
const INTERVAL_MS = Number(process.env.INTERVAL_MS ?? 100);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Subscribes to newHeads at `url`; each head's number and the moment (ms) it was read go into `heard`. */
async function subscribe(url: string, heard: Array<[number, number]>): Promise<WebSocket> {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  const answered = new Promise<void>((resolve) => ws.on('message', (m) => {
    const msg = JSON.parse(String(m));
    if (msg.id === 1) return resolve();
    if (msg.method === 'eth_subscription') heard.push([Number(msg.params.result.number), performance.now()]);
  }));
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
  await answered;
  return ws;
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];

async function run(pushes: boolean): Promise<string[]> {
  const nodes: TestAnvil[] = await Promise.all([startAnvil(), startAnvil(), startAnvil()]);
  const ng = await startNodegate({
    env: { REDIS_URL: '', DATABASE_URL: '', NODEGATE_LOG_LEVEL: '', NODEGATE_WORKERS: '' },
    config: {
      networks: { trio: { chainId: 1, upstreams: nodes.map((n) => ({ url: n.url, ...(pushes ? { ws: n.url.replace('http', 'ws') } : {}) })) } },
      limits: { enabled: false },
    },
  });
  try {
    const direct: Array<[number, number]> = [];
    const through: Array<[number, number]> = [];
    const sockets = [await subscribe(nodes[2].url.replace('http', 'ws'), direct), await subscribe(ng.rpcUrl('trio').replace('http', 'ws'), through)];
    const start = Number(await nodes[2].call('eth_blockNumber'));
    let live = nodes;
    for (let i = 0; i < BLOCKS; i++) {
      if (i === BLOCKS / 2) {
        nodes[0].proc.kill('SIGKILL');
        live = nodes.slice(1);
      }
      await Promise.all([...live.map((n) => n.call('evm_mine')), sleep(INTERVAL_MS)]);
    }
    // The last block's notification, or 5 s without it (a head missed counts below).
    for (const end = Date.now() + 5000; Date.now() < end && !through.some(([n]) => n === start + BLOCKS);) await sleep(10);
    for (const ws of sockets) ws.close();
    const at = new Map(direct);
    const delays = through.flatMap(([n, t]) => (at.has(n) ? [t - at.get(n)!] : []));
    const counts = new Map<number, number>();
    for (const [n] of through) counts.set(n, (counts.get(n) ?? 0) + 1);
    const missed = Array.from({ length: BLOCKS }, (_, i) => start + 1 + i).filter((n) => !counts.has(n)).length;
    const repeated = [...counts.values()].reduce((a, c) => a + c - 1, 0);
    const disorder = through.filter(([n], i) => i > 0 && n <= through[i - 1][0]).length;
    return [pushes ? 'pushes (upstreams[].ws)' : 'rounds of checks (no ws)', `${quantile(delays, 0.5).toFixed(1)} ms`, `${quantile(delays, 0.99).toFixed(1)} ms`,
      String(through.length), String(missed), String(repeated), String(disorder)];
  } finally {
    for (const n of nodes) n.stop();
    await ng.stop('SIGTERM');
  }
}

export async function benchHeads(): Promise<void> {
  console.log(`\n## newHeads over three anvils: delay after a direct anvil subscriber, ${BLOCKS} blocks one every ${INTERVAL_MS} ms, the first node killed (SIGKILL) after ${BLOCKS / 2}\n`);
  const rows = [await run(true), await run(false)];
  const head = ['Nodegate learns of blocks by', 'median', 'p99', 'heads', 'missed', 'repeated', 'out of order'];
  console.log(`| ${head.join(' | ')} |\n|${head.map(() => '---').join('|')}|`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}

if (import.meta.url === `file://${process.argv[1]}`) await benchHeads();
