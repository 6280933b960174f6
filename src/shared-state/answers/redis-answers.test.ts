import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { rawRedis, REDIS_URL, redisSkipReason, removeKeys, testPrefix } from '../../../test/helpers/redis.ts';
import { answersContract } from './answers.contract.ts';
import { RedisAnswers } from './redis-answers.ts';

const skip = await redisSkipReason('redis shared answers suite');
const run = testPrefix();
after(() => (skip ? undefined : removeKeys(run)));

/** Instances of one store: a prefix of its own under this run's. */
function store(maxBytes: number, url = REDIS_URL) {
  const prefix = `${run}${randomUUID().slice(0, 8)}:`;
  return async () => {
    const a = new RedisAnswers({ url, prefix, maxBytes, commandTimeoutMs: 2000 });
    await a.connect();
    return a;
  };
}

answersContract('redis', store, { skip });

describe('redis shared answers, specifically', { skip }, () => {
  test('an answer is one key under the prefix that expires with it, and its bytes are counted', async () => {
    const prefix = `${run}x:`;
    const a = new RedisAnswers({ url: REDIS_URL, prefix, maxBytes: 1 << 20, commandTimeoutMs: 2000 });
    await a.connect();
    const redis = rawRedis();
    try {
      await a.keep('main\u0000k', { raw: '"0x1"', filledBy: 'acct' }, 5000);
      const ttl = await redis.pttl(`${prefix}a:main\u0000k`);
      assert.ok(ttl > 4000 && ttl <= 5000, `expires in ${ttl} ms`);
      assert.ok(Number(await redis.get(`${prefix}ab`)) > 0);
      await a.drop('main\u0000');
      assert.equal(Number(await redis.get(`${prefix}ab`)), 0, 'dropped: its bytes given back');
    } finally {
      redis.disconnect();
      await a.close();
    }
  });

  test('rejects, rather than waits, when Redis is unreachable', async () => {
    const a = new RedisAnswers({ url: 'redis://127.0.0.1:1', prefix: run, maxBytes: 1000, commandTimeoutMs: 200 });
    try {
      await assert.rejects(a.connect());
      await assert.rejects(a.find('x', 1000), /enableOfflineQueue/);
    } finally {
      await a.close();
    }
  });
});
