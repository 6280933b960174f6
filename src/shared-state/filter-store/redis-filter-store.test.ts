import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { REDIS_URL, rawRedis, redisSkipReason, removeKeys, testPrefix } from '../../../test/helpers/redis.ts';
import type { FilterState } from './filter-store.ts';
import { filterStoreContract } from './filter-store.contract.ts';
import { RedisFilterStore } from './redis-filter-store.ts';

const skip = await redisSkipReason('redis filter store suite');
const prefix = testPrefix();
after(() => (skip ? undefined : removeKeys(prefix)));

/** A store as one gateway instance has it, under this run's prefix (and `sub`, a part of it no other test uses). */
async function instance(sub = randomBytes(4).toString('hex'), now?: () => number, timeoutMs = 2000): Promise<RedisFilterStore> {
  const s = new RedisFilterStore({ url: REDIS_URL, prefix: `${prefix}${sub}:`, commandTimeoutMs: timeoutMs, now });
  await s.connect();
  return s;
}

filterStoreContract('redis', (now) => instance(undefined, now), { skip });

const filter = (id: string, keyId: string, accountId: string, expiresAt = Date.now() + 60_000): FilterState => ({
  id, keyId, accountId, network: 'mainnet', kind: 'logs', cursor: { number: 1, hash: '0x01' }, origin: 1, recent: [], expiresAt,
});

describe('redis filter store, specifically', { skip }, () => {
  it('a filter made through one instance is found, saved and removed through another', async () => {
    const [a, b] = [await instance('shared'), await instance('shared')];
    try {
      assert.equal(await a.add(filter('0x1', 'k', 'acct'), 5), true);
      const f = (await b.get('0x1'))!;
      f.cursor = { number: 9, hash: '0x09' };
      assert.equal(await b.update(f), true);
      assert.equal((await a.get('0x1'))?.cursor.number, 9);
      await a.noteSent('mainnet', '0xaa');
      assert.deepEqual(await b.sentSince('mainnet', 0), { seq: 1, hashes: ['0xaa'] });
      assert.equal(await b.remove('0x1'), true);
      assert.equal(await a.get('0x1'), undefined);
      assert.equal(await a.remove('0x1'), false);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('two instances adding at once cannot both pass the cap: of 20 adds on one account with a cap of 5, 5 pass', async () => {
    const [a, b] = [await instance('race'), await instance('race')];
    try {
      const adds = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).add(filter(`0x${i + 100}`, `key${i % 4}`, 'one-account'), 5)));
      assert.equal(adds.filter(Boolean).length, 5);
      assert.equal(await a.count(), 5, 'the count /metrics shows is of every instance');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("keeps a filter as plain data whose Redis expiry is the filter's time left, moved by each save", async () => {
    const s = await instance('ttl');
    const redis = rawRedis();
    try {
      await s.add(filter('0x7', 'k', 'a', Date.now() + 5_000), 5);
      const key = `${prefix}ttl:f:0x7`;
      const ttl = await redis.pttl(key);
      assert.ok(ttl > 64_000 && ttl <= 65_000, `expires in ${ttl} ms: the 5 s left and the minute of grace`);
      const stored = JSON.parse((await redis.hget(key, 's'))!);
      assert.equal(stored.id, '0x7');
      const f = (await s.get('0x7'))!;
      f.expiresAt = Date.now() + 60_000;
      await s.update(f);
      assert.ok((await redis.pttl(key)) > 110_000, 'a poll gives it its idle time again');
      assert.ok((await redis.pttl(`${prefix}ttl:k:k`)) > 110_000, 'and the count of its key lives as long');
    } finally {
      redis.disconnect();
      await s.close();
    }
  });

  it('rejects, rather than waits, when Redis is unreachable (the shared state then answers FILTERS_UNAVAILABLE)', async () => {
    const s = new RedisFilterStore({ url: 'redis://127.0.0.1:1', prefix, commandTimeoutMs: 200 });
    try {
      await assert.rejects(s.connect());
      for (const call of [() => s.get('0x1'), () => s.add(filter('0x1', 'k', 'a'), 5), () => s.sentSince('mainnet', 0)]) {
        await assert.rejects(call(), /enableOfflineQueue/);
      }
    } finally {
      await s.close();
    }
  });
});
