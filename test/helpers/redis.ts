import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Redis } from 'ioredis';

/**
 * The real Redis the Redis suites (unit and e2e) run against (STYLE principle 11): 127.0.0.1:6379 unless
 * NODEGATE_TEST_REDIS_URL says otherwise. Each run keeps its keys under a prefix of its own and removes them.
 */
export const REDIS_URL = process.env.NODEGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const where = `${new URL(REDIS_URL).hostname}:${new URL(REDIS_URL).port || 6379}`;

async function reachable(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/**
 * Why the Redis suites of this file must be skipped (undefined: Redis is there). Unreachable with CI set is a
 * failure, not a skip: a test that cannot run there would pass silently.
 */
export async function redisSkipReason(suite: string): Promise<string | undefined> {
  if (await reachable()) return undefined;
  const reason = `Redis not reachable at ${where}`;
  if (process.env.CI) {
    test(`Redis is reachable at ${where} (required when CI is set)`, () => {
      assert.fail(`${reason}: the ${suite} cannot run, and CI requires it`);
    });
  } else {
    console.warn(`${suite} skipped: ${reason} (set CI to make this a failure)`);
  }
  return reason;
}

/** A key prefix no other run uses. */
export const testPrefix = () => `ng:test:${randomBytes(6).toString('hex')}:`;

/** A plain client, to look at keys as Redis keeps them. */
export function rawRedis(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
}

/** Deletes every key under `prefix`. */
export async function removeKeys(prefix: string): Promise<void> {
  const redis = rawRedis();
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 })) {
      if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
    }
  } finally {
    redis.disconnect();
  }
}
