import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { pino } from 'pino';
import { CONTRACT_BACKOFF, loginBackoffContract } from './login-backoff.contract.ts';
import { RedisLoginBackoff } from './redis-login-backoff.ts';
import { UNREACHABLE } from '../fallback.ts';
import { openSharedState, type SharedState } from '../open-shared-state.ts';
import { rawRedis, REDIS_URL, redisSkipReason, removeKeys, testPrefix } from '../../../test/helpers/redis.ts';

const skip = await redisSkipReason('redis login backoff suite');
const prefix = testPrefix();
const opened: Array<{ close(): Promise<void> }> = [];
after(async () => {
  await Promise.all(opened.map((r) => r.close()));
  if (!skip) await removeKeys(prefix);
});

function redis(url = REDIS_URL): RedisLoginBackoff {
  const r = new RedisLoginBackoff({ ...CONTRACT_BACKOFF, url, prefix, commandTimeoutMs: 1000 });
  opened.push(r);
  return r;
}
const connected = skip ? undefined : redis();
await connected?.connect();

loginBackoffContract('redis', () => connected!, { skip });

describe('login backoff shared by instances, specifically', { skip }, () => {
  const quiet = pino({ level: 'silent' });
  /** The login back-off as one instance in cluster mode has it (open-shared-state.ts): Redis and its own memory. */
  const instance = async (log = quiet, url = REDIS_URL): Promise<SharedState['loginBackoff']> => {
    const shared = await openSharedState({ redisUrl: url, redisTimeoutMs: 1000, redisPrefix: prefix, backoff: CONTRACT_BACKOFF, log });
    opened.push(shared);
    return shared.loginBackoff;
  };

  test('failures spread over three instances back off as on one', async () => {
    const three = [await instance(), await instance(), await instance()];
    const [e, a] = [`${randomUUID()}@example.com`, '10.1.1.1'];
    const now = Date.now();
    for (let i = 0; i < 4; i++) await three[i % 3].failed(e, a, now);
    for (const b of three) assert.equal(await b.waitSeconds(e, a, now), 4, 'four failures in a row, wherever they were made');
    await three[1].succeeded(e, a);
    assert.equal(await three[2].waitSeconds(e, a, now), 0, 'the right password on one instance ends the streak on all');
  });

  test('keys name neither the email nor the address', async () => {
    const b = await instance();
    const e = `${randomUUID()}@example.com`;
    await b.failed(e, '10.2.2.2', Date.now());
    const raw = rawRedis();
    try {
      const keys = await raw.keys(`${prefix}lb:*`);
      assert.ok(keys.length >= 3);
      assert.ok(keys.every((k) => !k.includes('@') && !k.includes('10.2.2.2')), keys.join(' '));
    } finally {
      raw.disconnect();
    }
  });

  test('with Redis unreachable, memory alone decides and one line says so', async () => {
    const lines: string[] = [];
    const b = await instance(pino({ level: 'info' }, { write: (l: string) => void lines.push(l) }), 'redis://127.0.0.1:1');
    const [e, a] = [`${randomUUID()}@example.com`, '10.3.3.3'];
    const now = Date.now();
    for (let i = 0; i < 3; i++) await b.failed(e, a, now);
    assert.equal(await b.waitSeconds(e, a, now), 2);
    assert.equal(await b.waitSeconds(`${randomUUID()}@example.com`, a, now), 0);
    const said = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === UNREACHABLE && l.shared === 'login back-off');
    assert.equal(said.length, 1, lines.join(''));
  });
});
