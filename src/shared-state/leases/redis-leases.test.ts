import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { rawRedis, REDIS_URL, redisSkipReason, removeKeys, testPrefix } from '../../../test/helpers/redis.ts';
import { leasesContract } from './leases.contract.ts';
import { RedisLeases } from './redis-leases.ts';

const skip = await redisSkipReason('redis leases suite');
const prefix = testPrefix();
after(() => (skip ? undefined : removeKeys(prefix)));

/** One more instance's leases, connected to this run's Redis. */
async function instance(url = REDIS_URL): Promise<RedisLeases> {
  const l = new RedisLeases({ url, prefix, commandTimeoutMs: 2000 });
  await l.connect();
  return l;
}

leasesContract('redis', () => instance(), { skip });

describe('redis leases, specifically', { skip }, () => {
  test('a lease is one key under the prefix, naming its holder, that expires with it', async () => {
    const l = await instance();
    const redis = rawRedis();
    try {
      const name = `expiry:${randomUUID()}`;
      await l.take(name, 5000);
      const ttl = await redis.pttl(prefix + name);
      assert.ok(ttl > 4000 && ttl <= 5000, `expires in ${ttl} ms`);
      assert.match((await redis.get(prefix + name))!, /^[0-9a-f]{16}$/);
    } finally {
      redis.disconnect();
      await l.close();
    }
  });

  test('rejects, rather than waits, when Redis is unreachable', async () => {
    const l = new RedisLeases({ url: 'redis://127.0.0.1:1', prefix, commandTimeoutMs: 200 });
    try {
      await assert.rejects(l.connect());
      await assert.rejects(l.take('x', 1000), /enableOfflineQueue/);
    } finally {
      await l.close();
    }
  });
});
