/**
 * The latency a hop adds at concurrency 1: many sequential requests on one keep-alive connection, each timed
 * with hrtime around an undici request (autocannon only knows whole milliseconds). The targets take turns in
 * rounds, so a slow spell of the machine falls on all of them alike.
 *   npm run bench -- added-latency
 */
import { Client } from 'undici';
import type { BenchTargets } from './bench-targets.ts';
import { printTable } from './rpc-throughput.ts';

const ROUNDS = 6;
const PER_ROUND = 600;
const WARMUP = 1000;
const BODY = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';
const HEADERS = { 'content-type': 'application/json' };

export async function benchAddedLatency(targets: BenchTargets): Promise<void> {
  const list = [await targets.anvil(), await targets.proxy(), await targets.nodegate()];
  const clients = list.map((t) => ({ t, client: new Client(new URL(t.url).origin, { pipelining: 1 }), path: new URL(t.url).pathname, us: [] as number[] }));
  try {
    for (const c of clients) await time(c.client, c.path, WARMUP, []);
    for (let r = 0; r < ROUNDS; r++) for (const c of clients) await time(c.client, c.path, PER_ROUND, c.us);
  } finally {
    await Promise.all(clients.map((c) => c.client.close()));
  }
  const base = median(clients[0].us);
  console.log(`\nadded latency at concurrency 1: eth_blockNumber, ${ROUNDS * PER_ROUND} sequential requests per target on one connection (µs)`);
  printTable(['target', 'p50', 'p90', 'p99', 'added p50'], clients.map((c, i) => [
    c.t.name, us(median(c.us)), us(pct(c.us, 0.9)), us(pct(c.us, 0.99)), i ? `+${us(median(c.us) - base)}` : '',
  ]));
}

async function time(client: Client, path: string, n: number, out: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const res = await client.request({ path, method: 'POST', headers: HEADERS, body: BODY });
    const text = await res.body.text();
    out.push(Number(process.hrtime.bigint() - t0) / 1000);
    if (res.statusCode !== 200 || text.includes('"error":')) throw new Error(`latency run: HTTP ${res.statusCode} ${text.slice(0, 200)}`);
  }
}

const median = (xs: number[]) => pct(xs, 0.5);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

const us = (x: number) => x.toFixed(0);
