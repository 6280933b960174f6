/**
 * The load-sized tests: each is a test file of the suite that runs there at a small size and here at its full size
 * (NODEGATE_SOAK=1, test/helpers/soak.ts), so the two never drift apart. `npm run soak -- fuzz` runs one;
 * `npm run soak` runs them all after the traffic mix. Run one at a time (they start chains and gateways).
 */
import { spawnSync } from 'node:child_process';

export const SOAK_TESTS: Record<string, { file: string; what: string }> = {
  fuzz: {
    file: 'test/e2e/fuzz.test.ts',
    what: 'the JSON-RPC endpoint fuzzed with ~107,000 inputs, a fresh seed each run (the suite: a few thousand, a fixed seed)',
  },
  'webhooks-load': {
    file: 'test/e2e/webhooks-load.test.ts',
    what: '1,000 blocks mined at once with 20 webhooks: 20,000 deliveries, once each and in order (the suite: 100 blocks, 5 webhooks)',
  },
  'webhooks-stats-scale': {
    file: 'test/e2e/webhooks-stats-scale.test.ts',
    what: '/metrics and /analytics/webhooks at 502,000 outbox events, as fast as at 2,000 (the suite: the numbers at 12,000)',
  },
  'outbox-numbers': {
    file: 'src/store/webhook-stats.test.ts',
    what: 'every tenant\'s outbox numbers on SQLite and PostgreSQL at 502,000 events, as fast as at 2,000 (the suite: 12,000, plans by index)',
  },
  durability: {
    file: 'test/e2e/durability.test.ts',
    what: 'the durability suite with a burst of 2,000 raw transactions from 32 senders, then a restart on its ~1,800 blocks (the suite: 320)',
  },
  'webhooks-rss': {
    file: 'test/e2e/webhooks-rss.test.ts',
    what: "two logs webhooks over 40 blocks of 3,000 1-KiB logs, the gateway's RSS after each (the suite: 12 blocks)",
  },
  'chain-faults': {
    file: 'test/e2e/chain-faults.test.ts',
    what: 'the embedded chain under 20 SIGKILLs of gateway, anvil or both and 10 s of full disk, 5 runs: nothing acknowledged lost (the suite: 1 run)',
  },
  'ponder-pruned': {
    file: 'test/e2e/ponder-pruned.test.ts',
    what: 'ponder indexing 50,001 blocks and 50,000 events with receipts through two pruned, throttled providers and an archive node, each its own anvil: the rows a plain archive node gives, 0 warnings (the suite: test/e2e/upstream-indexer.test.ts, 12,001 blocks, the same calls without ponder)',
  },
  'get-logs-long': {
    file: 'test/e2e/get-logs-long.test.ts',
    what: "eth_getLogs over 100,001 blocks through three providers taking 2,000 blocks, each in front of its own anvil: one answer equal to the archive node's, within the deadline (the suite: 12,001 blocks)",
  },
  'workers-sigterm': {
    file: 'test/e2e/workers-sigterm.test.ts',
    what: '`--workers 2` stopped with SIGTERM under 8 keep-alive clients, 20 times: every call sent on an open connection answered (the suite: 3 rounds)',
  },
  'shared-cache': {
    file: 'test/e2e/cache-shared-workload.test.ts',
    what: 'an indexer over 5,000 blocks and 20 wallets polling for 20 s through nginx to three instances sharing the cache tier in Redis, then again after restarting each: node calls against one instance without a cache, and the ratio (the suite: 500 blocks, 5 wallets for 4 s)',
  },
  'heavy-events': {
    file: 'test/e2e/heavy-events.test.ts',
    what: '30 transactions of 3,000 logs each, reads meanwhile, a restart and a crash (the suite: 4 such transactions)',
  },
};

/** Runs one load-sized test at its full size; answers whether it passed. */
export function runSoakTest(name: string): boolean {
  const { file, what } = SOAK_TESTS[name];
  console.log(`\nsoak ${name}: ${what}\n  NODEGATE_SOAK=1 node --test ${file}`);
  const t0 = Date.now();
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=3600000', '--test-force-exit', '--test-reporter=spec', file],
    { stdio: 'inherit', env: { ...process.env, NODEGATE_SOAK: '1' } },
  );
  const ok = r.status === 0;
  console.log(`soak ${name}: ${ok ? 'passed' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return ok;
}
