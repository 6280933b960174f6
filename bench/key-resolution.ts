/**
 * What authentication costs on the hot path: KeyResolver.resolve() with a warm cache, next to a whole request
 * through the gateway measured in the same run (autocannon on loopback, eth_chainId against the embedded anvil).
 *   npm run bench -- key-resolution
 */
import autocannon from 'autocannon';
import { performance } from 'node:perf_hooks';
import { startTestGateway } from '../test/helpers/gateway.ts';

export async function benchKeyResolution(): Promise<void> {
  // The cache off: eth_chainId would otherwise be answered from it, and the whole request would not reach anvil.
  const g = await startTestGateway({ cache: { enabled: false } });
  try {
    const keys = g.gw.keys;
    await keys.resolve(g.key); // warm the cache
    const n = 500_000;
    for (let i = 0; i < 50_000; i++) await keys.resolve(g.key);
    const t = performance.now();
    for (let i = 0; i < n; i++) await keys.resolve(g.key);
    const resolveUs = ((performance.now() - t) * 1000) / n;

    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
    const url = `${g.url}/v1/mainnet/${g.key}`;
    const run = (connections: number) => autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections, duration: 5 });
    await run(4); // warm-up: JIT, keep-alive pools
    const one = await run(1);
    const many = await run(16);

    // autocannon's latencies are whole milliseconds; at one connection, time per request is 1 / throughput.
    const perRequestUs = 1e6 / one.requests.average;
    console.log('\nkey resolution (warm cache) vs a whole request, eth_chainId through the gateway to anvil');
    console.log(`  KeyResolver.resolve, warm:          ${resolveUs.toFixed(2)} µs per call (${n} calls)`);
    console.log(`  whole request, 1 connection:        ${perRequestUs.toFixed(0)} µs per request (${one.requests.average.toFixed(0)} req/s)`);
    console.log(`  whole request, 16 connections:      ${many.requests.average.toFixed(0)} req/s (${(1e6 / many.requests.average).toFixed(0)} µs of throughput per request)`);
    console.log(`  key resolution share of a request:  ${((resolveUs / perRequestUs) * 100).toFixed(2)} % at 1 connection`);
  } finally {
    await g.close();
  }
}
