/**
 * Gateway-kept filters at load size: 50 log filters, each behind 3 transactions of 5,000 logs (15,000 logs per
 * filter), polled until drained. Prints the first filter's poll sizes (capped at eth_getLogs' 10,000) and the
 * gateway's RSS before and after. A bench, not a test (tenant-isolation.test.ts has a 3-filter twin that
 * asserts the polls): on a busy machine it alone takes minutes.
 *   npm run bench -- filters
 */
import { startTestGateway } from '../test/helpers/gateway.ts';

/** Init code emitting 5,000 LOG1 (topic: a countdown) and deploying nothing. */
const MANY_LOGS = '0x6113885b8060206000a1600190038060035700';
const FILTERS = Number(process.env.BENCH_FILTERS ?? 50);

export async function benchFiltersMemory(): Promise<void> {
  const g = await startTestGateway({ networks: { mainnet: { chainId: 1 } } });
  try {
    const t0 = Date.now();
    const call = async (method: string, params: unknown[]) => {
      const { body } = await g.rpc({ jsonrpc: '2.0', id: 1, method, params });
      if (body?.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
      return body.result;
    };
    const [from] = await call('eth_accounts', []);
    const filters: string[] = [];
    for (let i = 0; i < FILTERS; i++) filters.push(await call('eth_newFilter', [{}]));
    const rss0 = process.memoryUsage().rss;
    for (let i = 0; i < 3; i++) {
      const hash = await call('eth_sendTransaction', [{ from, data: MANY_LOGS, gas: '0x1c9c380' }]);
      while (!(await call('eth_getTransactionReceipt', [hash]))) await new Promise((r) => setTimeout(r, 20));
    }
    const sizes: number[] = [];
    let drained = 0;
    for (const id of filters) {
      let total = 0;
      for (let poll = 0; poll < 3; poll++) {
        const logs = await call('eth_getFilterChanges', [id]);
        if (id === filters[0]) sizes.push(logs.length);
        total += logs.length;
      }
      if (total === 15_000) drained++;
    }
    const rss1 = process.memoryUsage().rss;
    console.log(`\nfilters-memory: ${FILTERS} filters × 15,000 logs (3 transactions of 5,000)`);
    console.log(`  first filter's polls: ${sizes.join(', ')} logs; filters that reported all 15,000: ${drained} of ${FILTERS}`);
    console.log(`  gateway RSS ${(rss0 / 1048576).toFixed(0)} → ${(rss1 / 1048576).toFixed(0)} MB; ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    await g.close();
  }
}
