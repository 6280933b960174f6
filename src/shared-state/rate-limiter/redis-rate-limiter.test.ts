import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { rateLimiterContract } from './rate-limiter.contract.ts';
import { RedisRateLimiter } from './redis-rate-limiter.ts';
import { REDIS_URL, rawRedis, redisSkipReason, removeKeys, testPrefix } from '../../../test/helpers/redis.ts';

const skip = await redisSkipReason('redis rate limiter suite');
const prefix = testPrefix();
after(() => (skip ? undefined : removeKeys(prefix)));

/** A limiter as one gateway instance would have it, connected. */
async function instance(): Promise<RedisRateLimiter> {
  const limiter = new RedisRateLimiter({ url: REDIS_URL, prefix });
  await limiter.connect();
  return limiter;
}

rateLimiterContract('redis', instance, { skip });

describe('redis rate limiter, specifically', { skip }, () => {
  test('several gateway instances spend from one bucket', async () => {
    const [a, b] = [await instance(), await instance()];
    try {
      const bucket = `shared:${randomUUID()}`;
      assert.equal((await a.consume(bucket, 3, 1, 5)).remaining, 2);
      assert.equal((await b.consume(bucket, 2, 1, 5)).remaining, 0);
      assert.equal((await a.consume(bucket, 1, 1, 5)).allowed, false);
      const together = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).consume(`race:${bucket}`, 1, 1, 10)));
      assert.equal(together.filter((d) => d.allowed).length, 10);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('keeps one key per bucket under its prefix, expiring when the bucket is full again', async () => {
    const limiter = await instance();
    const redis = rawRedis();
    try {
      const bucket = `expiry:${randomUUID()}`;
      await limiter.consume(bucket, 2, 10, 10); // full again in 200 ms
      const ttl = await redis.pttl(prefix + bucket);
      assert.ok(ttl > 0 && ttl <= 200, `key expires in ${ttl} ms`);
      await sleep(ttl + 50);
      assert.equal(await redis.exists(prefix + bucket), 0);
      assert.equal((await limiter.consume(bucket, 10, 10, 10)).allowed, true, 'a bucket without a key is full');
    } finally {
      redis.disconnect();
      await limiter.close();
    }
  });

  test('writes nothing for a refused request or one of no cost on a full bucket', async () => {
    const limiter = await instance();
    const redis = rawRedis();
    try {
      const bucket = `nowrite:${randomUUID()}`;
      await limiter.consume(bucket, 0, 1, 5);
      assert.equal(await redis.exists(prefix + bucket), 0);
      await limiter.consume(bucket, 5, 1, 5);
      const before = await redis.get(prefix + bucket);
      await limiter.consume(bucket, 1, 1, 5);
      assert.equal(await redis.get(prefix + bucket), before);
    } finally {
      redis.disconnect();
      await limiter.close();
    }
  });

  test('rejects, rather than waits, when Redis is unreachable', async () => {
    const limiter = new RedisRateLimiter({ url: 'redis://127.0.0.1:1', prefix });
    try {
      await assert.rejects(limiter.connect());
      // No offline queue: refused at once, by ioredis itself (a queued command would end later as a time-out);
      // said by the error, not timed, so that a busy machine cannot fail it.
      await assert.rejects(limiter.consume('x', 1, 1, 1), /enableOfflineQueue/);
      await assert.rejects(limiter.ping(), /enableOfflineQueue/);
    } finally {
      await limiter.close();
    }
  });
});
