import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import pino from 'pino';
import { ANSWERS_AGAIN, Fallback, UNREACHABLE } from './fallback.ts';
import { CONTRACT_BACKOFF } from './login-backoff/login-backoff.contract.ts';
import { openSharedState } from './open-shared-state.ts';
import { MemoryRateLimiter } from './rate-limiter/memory-rate-limiter.ts';
import type { RateDecision, RateLimiter } from './rate-limiter/rate-limiter.ts';
import { REDIS_URL, rawRedis, redisSkipReason, removeKeys, testPrefix } from '../../test/helpers/redis.ts';
import { eventually } from '../../test/helpers/eventually.ts';

/** A logger whose lines the test can read. */
function capturedLog() {
  const lines: { level: number; msg: string; shared?: string; at?: string; err?: string }[] = [];
  const stream = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { log: pino({ level: 'info' }, stream), warnings: () => lines.filter((l) => l.level === 40), infos: () => lines.filter((l) => l.level === 30) };
}

/**
 * `p`'s value, asserting it came without waiting for any I/O (a socket, a timer): it settled within the microtasks
 * of this turn of the event loop, before a setImmediate queued now could run. No clock: a request that asked the
 * unreachable Redis would wait at least a turn for its refusal, however fast the machine.
 */
async function withoutIo<T>(p: T | Promise<T>): Promise<T> {
  let turned = false;
  const check = setImmediate(() => { turned = true; });
  const value = await p;
  clearImmediate(check);
  assert.equal(turned, false, 'answered without waiting on the unreachable Redis');
  return value;
}

// Asked before any test is registered: the runner's --test-force-exit ends the file once the tests it knows of are
// done, so a suite registered after this await (the tests above it finishing first) was now and then never run,
// and not reported as skipped either.
const skip = await redisSkipReason('fallback suite (with Redis)');
const quiet = pino({ level: 'silent' });
const LIMITS = 'per-second limits and failure guards';

describe('the fallback, on a shared store that fails', () => {
  test('while degraded, no call reaches the shared store; it is asked at most once per recheck interval, off the request path', async () => {
    const { log, warnings, infos } = capturedLog();
    let now = 0;
    const calls = { consume: 0, ping: 0 };
    let down = true;
    const remote: RateLimiter = {
      async consume(bucket, cost, rate, burst, credit) {
        calls.consume++;
        if (down) throw new Error('Command timed out');
        return new MemoryRateLimiter().consume(bucket, cost, rate, burst, credit);
      },
      async close() {},
    };
    const ping = async () => {
      calls.ping++;
      if (down) throw new Error('Connection is closed');
    };
    const fallback = new Fallback({ kind: LIMITS, meanwhile: 'memory', at: 'redis', where: '127.0.0.1:6379', ping, log, recheckMs: 1000, now: () => now });
    const limiter = fallback.wrap(remote, new MemoryRateLimiter(), ['consume']);
    await Promise.all(Array.from({ length: 5 }, () => limiter.consume('k', 1, 10, 10)));
    assert.equal(calls.consume, 5, 'calls already on their way all find out');
    assert.equal(warnings().length, 1, 'one warning per outage');
    assert.deepEqual({ msg: warnings()[0].msg, shared: warnings()[0].shared, at: warnings()[0].at }, { msg: UNREACHABLE, shared: LIMITS, at: '127.0.0.1:6379' });
    for (let i = 0; i < 50; i++) await limiter.consume('k', 0, 10, 10);
    assert.deepEqual(calls, { consume: 5, ping: 0 });
    now = 1000;
    for (let i = 0; i < 50; i++) await limiter.consume('k', 0, 10, 10);
    await sleep(0);
    assert.deepEqual(calls, { consume: 5, ping: 1 }, 'one check in the interval');
    down = false;
    now = 1500;
    fallback.status();
    await sleep(0);
    assert.equal(calls.ping, 1, 'not before the interval is over');
    now = 2000;
    fallback.status();
    await sleep(0);
    assert.equal(fallback.status(), 'redis');
    assert.equal(infos().at(-1)?.msg, ANSWERS_AGAIN);
    await limiter.consume('k', 1, 10, 10);
    assert.equal(calls.consume, 6, 'back to the shared store');
  });

  test('a first connection that fails starts the kind degraded, saying why, before any call finds out', async () => {
    const { log, warnings } = capturedLog();
    const fallback = new Fallback({ kind: 'filters', meanwhile: 'unavailable', at: 'primary', where: 'the primary process', ping: () => new Promise(() => {}), log, connecting: Promise.reject(new Error('connect ECONNREFUSED')) });
    await fallback.ready;
    assert.equal(fallback.status(), 'degraded');
    assert.equal(warnings().length, 1);
    assert.equal(warnings()[0].err, 'connect ECONNREFUSED');
  });
});

describe('per-second limits, without Redis', () => {
  test('answer from memory and report degraded when nothing listens at the Redis address, with one warning', async () => {
    const { log, warnings } = capturedLog();
    const shared = await openSharedState({ redisUrl: 'redis://127.0.0.1:1', redisTimeoutMs: 200, backoff: CONTRACT_BACKOFF, log });
    const limiter = shared.rateLimiter;
    try {
      assert.equal(limiter.status(), 'degraded');
      const decisions: RateDecision[] = [];
      for (let i = 0; i < 6; i++) decisions.push(await withoutIo(limiter.consume('k', 1, 1, 5)));
      assert.deepEqual(decisions.map((d) => d.allowed), [true, true, true, true, true, false], 'the plan is still enforced, in memory');
      assert.equal(warnings().filter((w) => w.shared === LIMITS).length, 1);
      assert.equal(limiter.status(), 'degraded');
    } finally {
      await shared.close();
    }
  });

  test('without a Redis URL, limits are kept in memory', async () => {
    const shared = await openSharedState({ redisTimeoutMs: 200, backoff: CONTRACT_BACKOFF, log: quiet });
    assert.equal(shared.rateLimiter.status(), 'memory');
    assert.ok(shared.rateLimiter instanceof MemoryRateLimiter);
    await shared.close();
  });
});

/** A TCP relay to Redis that the test can cut and restore, as a network outage would. */
class Relay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async start(): Promise<void> {
    const target = new URL(REDIS_URL);
    this.server = createServer((client) => {
      const upstream = connect(Number(target.port || 6379), target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => { this.sockets.delete(s); client.destroy(); upstream.destroy(); });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const prefix = testPrefix();
after(() => (skip ? undefined : removeKeys(prefix)));

describe('per-second limits, with Redis', { skip }, () => {
  test('report redis and keep their buckets there when Redis answers', async () => {
    const { log, warnings } = capturedLog();
    const shared = await openSharedState({ redisUrl: REDIS_URL, redisTimeoutMs: 200, redisPrefix: prefix, backoff: CONTRACT_BACKOFF, log });
    const redis = rawRedis();
    try {
      assert.equal(shared.rateLimiter.status(), 'redis');
      const bucket = `resilient:${randomUUID()}`;
      assert.equal((await shared.rateLimiter.consume(bucket, 1, 1, 5)).remaining, 4);
      assert.equal(await redis.exists(`${prefix}rl:${bucket}`), 1);
      assert.equal(warnings().length, 0);
    } finally {
      redis.disconnect();
      await shared.close();
    }
  });

  test('fall back to memory when Redis goes away mid-way, with one warning, and return to Redis when it is back', async () => {
    const { log, warnings, infos } = capturedLog();
    const relay = new Relay();
    await relay.start();
    const shared = await openSharedState({ redisUrl: `redis://127.0.0.1:${relay.port}`, redisTimeoutMs: 200, redisPrefix: prefix, backoff: CONTRACT_BACKOFF, log, recheckMs: 100 });
    const limiter = shared.rateLimiter;
    const redis = rawRedis();
    try {
      assert.equal((await limiter.consume(`before:${randomUUID()}`, 1, 1, 5)).allowed, true);
      assert.equal(limiter.status(), 'redis');

      await relay.cut();
      const during = `during:${randomUUID()}`;
      const decisions = await Promise.all(Array.from({ length: 8 }, () => limiter.consume(during, 1, 1, 5)));
      for (let i = 0; i < 20; i++) decisions.push(await limiter.consume(during, 1, 1, 5));
      assert.equal(decisions.filter((d) => d.allowed).length, 5, 'still limited, from memory');
      assert.equal(limiter.status(), 'degraded');
      assert.equal(warnings().length, 1, 'one warning for the outage');
      assert.equal(warnings()[0].shared, LIMITS);
      assert.equal(await redis.exists(`${prefix}rl:${during}`), 0);

      await relay.start(); // same port
      await eventually(() => limiter.status() === 'redis', 5000, 'back on Redis once it answers');
      const back = `back:${randomUUID()}`;
      await limiter.consume(back, 1, 1, 5);
      assert.equal(await redis.exists(`${prefix}rl:${back}`), 1, 'buckets are in Redis again');
      assert.equal(infos().at(-1)!.msg, ANSWERS_AGAIN);
      assert.equal(warnings().length, 1);
    } finally {
      redis.disconnect();
      await shared.close();
      await relay.cut();
    }
  });
});
