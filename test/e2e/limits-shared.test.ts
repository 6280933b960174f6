import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { killAll, startNodegate, type NodegateProcess } from '../helpers/process.ts';
import { offerLoad } from '../helpers/offered-load.ts';
import { startInstantNode } from '../helpers/instant-node.ts';
import { freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';
import { redisSkipReason, REDIS_URL } from '../helpers/redis.ts';

/**
 * docs/decisions.md §7 across instances: two gateway processes sharing PostgreSQL (the key) and Redis (the bucket) give
 * one key N compute units per second in all, not N each.
 */
const skip = (await postgresSkipReason('shared limits suite')) ?? (await redisSkipReason('shared limits suite'));

describe('per-second limits shared by two gateway processes through Redis', { skip }, () => {
  let node: Server;
  let a: NodegateProcess;
  let b: NodegateProcess;
  const N = 200;

  before(async () => {
    // A node that answers eth_chainId at once, so the gateways alone decide what is admitted.
    const instant = await startInstantNode();
    node = instant.server;
    const config = {
      networks: { mainnet: { chainId: 1, upstream: instant.url } },
      plans: { shared: { name: 'Shared', cuPerSecond: N, cuPerMonth: 1_000_000_000, maxBatchSize: 100 } },
      accounts: { defaultPlan: 'shared' },
      // A loaded 2-core machine can make Redis answer late; falling back to local buckets (each N) would be
      // the resilience working, not what this test measures.
      limits: { redisTimeoutMs: 2000, burstSeconds: 1 },
    };
    const env = { DATABASE_URL: await freshDatabase(), REDIS_URL, NODEGATE_LOG_LEVEL: 'warn' };
    a = await startNodegate({ config, env });
    b = await startNodegate({ config, env, key: a.key });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await killAll();
    node?.close();
    for (const g of [a, b]) if (g) rmSync(g.dataDir, { recursive: true, force: true });
  });

  test('/readyz says the limits are in Redis', async () => {
    for (const g of [a, b]) {
      const body = await (await fetch(`${g.url}/readyz`)).json();
      assert.equal(body.limits, 'redis');
    }
  });

  test('offered 3N for 10 s across both, the key gets N per second in all (plus the burst)', async () => {
    const perCall = 5; // eth_chainId
    const seconds = 10;
    const admitted = [0, 0];
    const { elapsed } = await offerLoad((3 * N) / perCall, seconds, async (i) => {
      const which = i % 2;
      const r = await fetch((which ? b : a).rpcUrl(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
      await r.arrayBuffer();
      if (r.status === 200) admitted[which] += perCall;
      else assert.equal(r.status, 429, 'a refusal is a 429, nothing else');
      return r.status === 200;
    });
    const total = admitted[0] + admitted[1];
    console.log(`limits accuracy (Redis, two processes): N=${N} CU/s, offered ${3 * N} CU/s for ${elapsed.toFixed(1)} s; admitted ${admitted[0]} + ${admitted[1]} = ${total} CU = ${(total / elapsed).toFixed(1)} CU/s`);
    assert.ok(total >= 0.9 * N * elapsed, `at least 0.9N per second: ${total}`);
    assert.ok(total <= 1.1 * N * elapsed + N, `at most 1.1N per second plus the burst: ${total}`);
    assert.ok(admitted[0] > 0 && admitted[1] > 0, 'both instances admitted some');
    for (const g of [a, b]) assert.equal((await (await fetch(`${g.url}/readyz`)).json()).limits, 'redis', 'the buckets stayed in Redis throughout');
  });
});
