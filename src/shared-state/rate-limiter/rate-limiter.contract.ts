import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { RateLimiter } from './rate-limiter.ts';

/**
 * The behaviour every RateLimiter must have (STYLE principle 6): run by memory-rate-limiter.test.ts and
 * redis-rate-limiter.test.ts. Each test has buckets of its own. Timing is never asserted precisely: slow buckets
 * (1 unit/s) where a test must not see a refill, and "after waiting at least X ms, at least the units earned in X
 * are admitted" where it must.
 */
export function rateLimiterContract(name: string, make: () => Promise<RateLimiter>, options: { skip?: string } = {}): void {
  describe(`${name} rate limiter`, { skip: options.skip }, () => {
    let limiter: RateLimiter;
    before(async () => {
      limiter = await make();
    });
    after(() => limiter?.close());

    const bucket = () => `contract:${randomUUID()}`;
    /** Spends `cost` until refused; answers how many were admitted. */
    async function drain(b: string, cost: number, rate: number, burst: number): Promise<number> {
      let admitted = 0;
      while ((await limiter.consume(b, cost, rate, burst)).allowed) admitted++;
      return admitted;
    }

    test('admits up to the burst at once, counting down what remains, then refuses', async () => {
      const b = bucket();
      const decisions = [];
      for (let i = 0; i < 6; i++) decisions.push(await limiter.consume(b, 1, 1, 5));
      assert.deepEqual(decisions[0], { allowed: true, limit: 5, remaining: 4, resetSeconds: 1, retryAfterMs: 0, retryAfterSeconds: 0 });
      assert.deepEqual(decisions.map((d) => d.allowed), [true, true, true, true, true, false]);
      assert.deepEqual(decisions.map((d) => d.remaining), [4, 3, 2, 1, 0, 0]);
      const refused = decisions[5];
      assert.equal(refused.limit, 5);
      assert.equal(refused.resetSeconds, 5, 'the bucket is full again 5 s (5 units at 1/s) from now');
      assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 1000, `retry after ${refused.retryAfterMs} ms`);
      assert.equal(refused.retryAfterSeconds, 1);
    });

    test('refills at the rate: after a wait, at least the units earned meanwhile are admitted, and no more than that', async () => {
      const b = bucket();
      const t0 = performance.now();
      const first = await drain(b, 1, 20, 10);
      assert.ok(first >= 10, `admitted ${first} at once with a burst of 10`);
      await sleep(300); // earns 6 units at 20/s
      const again = await drain(b, 1, 20, 10);
      const elapsed = performance.now() - t0;
      assert.ok(again >= 6, `admitted ${again} after 300 ms at 20/s`);
      // The bucket's bound: over any interval, the burst plus what the rate earned in it (+1 for the ms rounding).
      assert.ok(first + again <= 10 + (20 * elapsed) / 1000 + 1, `admitted ${first + again} in ${elapsed.toFixed(0)} ms at 20/s`);
    });

    test('a refused request spends nothing', async () => {
      const b = bucket();
      assert.equal((await limiter.consume(b, 4, 1, 5)).remaining, 1);
      for (let i = 0; i < 3; i++) {
        const d = await limiter.consume(b, 3, 1, 5);
        assert.equal(d.allowed, false);
        assert.equal(d.remaining, 1);
      }
      assert.deepEqual(await limiter.consume(b, 1, 1, 5), { allowed: true, limit: 5, remaining: 0, resetSeconds: 5, retryAfterMs: 0, retryAfterSeconds: 0 });
    });

    test('a request costlier than the burst passes only when the bucket is full, and empties it', async () => {
      const full = bucket();
      assert.deepEqual(await limiter.consume(full, 8, 1, 5), { allowed: true, limit: 5, remaining: 0, resetSeconds: 8, retryAfterMs: 0, retryAfterSeconds: 0 });
      const next = await limiter.consume(full, 1, 1, 5);
      assert.equal(next.allowed, false);
      assert.ok(next.retryAfterMs > 3000 && next.retryAfterMs <= 4000, `retry after ${next.retryAfterMs} ms: 3 units owed, then 1 asked`);
      assert.equal(next.retryAfterSeconds, 4);

      const used = bucket();
      assert.equal((await limiter.consume(used, 1, 1, 5)).allowed, true);
      const big = await limiter.consume(used, 8, 1, 5);
      assert.equal(big.allowed, false);
      assert.ok(big.retryAfterMs > 0 && big.retryAfterMs <= 1000, `retry after ${big.retryAfterMs} ms, when the bucket is full`);
    });

    test('a negative cost gives units back, never past a full bucket', async () => {
      const b = bucket();
      assert.equal((await limiter.consume(b, 5, 1, 5)).remaining, 0);
      assert.equal((await limiter.consume(b, -3, 1, 5)).remaining, 3, 'three given back');
      assert.equal((await limiter.consume(b, -100, 1, 5)).remaining, 5, 'at most a full bucket');
      assert.equal((await limiter.consume(b, 5, 1, 5)).allowed, true);
    });

    test('units spent at admission are a credit: judged as if still there, kept when refused', async () => {
      // A trace (8) on a bucket of 5 that was full before its body's admission unit was taken: passes.
      const full = bucket();
      assert.equal((await limiter.consume(full, 1, 1, 5)).remaining, 4);
      const trace = await limiter.consume(full, 8, 1, 5, 1);
      assert.equal(trace.allowed, true);
      assert.equal(trace.remaining, 0);
      // A batch (5) on 3 units left after its admission unit: refused, and the admission unit stays spent.
      const b = bucket();
      assert.equal((await limiter.consume(b, 2, 1, 5)).remaining, 3);
      assert.equal((await limiter.consume(b, 1, 1, 5)).remaining, 2);
      const refused = await limiter.consume(b, 5, 1, 5, 1);
      assert.equal(refused.allowed, false);
      assert.equal(refused.remaining, 2);
      const ok = await limiter.consume(b, 3, 1, 5, 1);
      assert.equal(ok.allowed, true, '3 units against 2 left plus the 1 of admission');
      assert.equal(ok.remaining, 0);
    });

    test('keeps buckets apart', async () => {
      const a = bucket();
      const b = bucket();
      assert.equal(await drain(a, 1, 1, 3), 3);
      assert.deepEqual(await limiter.consume(b, 1, 1, 3), { allowed: true, limit: 3, remaining: 2, resetSeconds: 1, retryAfterMs: 0, retryAfterSeconds: 0 });
      assert.equal((await limiter.consume(a, 1, 1, 3)).allowed, false);
    });

    test('when refused, retryAfterMs is how long to wait: waiting that long admits the request', async () => {
      const b = bucket();
      assert.equal(await drain(b, 1, 10, 2), 2);
      const refused = await limiter.consume(b, 1, 10, 2);
      assert.equal(refused.allowed, false);
      assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 100, `retry after ${refused.retryAfterMs} ms at 10/s`);
      assert.equal(refused.retryAfterSeconds, 1, 'whole seconds, rounded up');
      await sleep(refused.retryAfterMs + 5); // timers may fire a millisecond early
      assert.equal((await limiter.consume(b, 1, 10, 2)).allowed, true);
    });

    test('a call dearer than the bucket passes on a full bucket at every rate, and again after its Retry-After', async () => {
      // Each rate on a bucket of its own, all at once: their Retry-After waits (~1.5 s each) overlap instead of adding up.
      await Promise.all([1, 3, 7, 330, 660, 1000, 5000].map(async (rate) => {
        const b = bucket();
        const dear = Math.ceil(rate * 1.5) + 1;
        const first = await limiter.consume(b, dear, rate, rate);
        assert.equal(first.allowed, true, `${dear} units on a full bucket of ${rate}`);
        assert.ok(first.remaining <= first.limit && first.limit === rate, `remaining ${first.remaining} of ${first.limit}`);
        if (rate < 330) return; // the slow rates would make this test wait seconds
        const refused = await limiter.consume(b, dear, rate, rate);
        assert.equal(refused.allowed, false);
        assert.equal(refused.retryAfterSeconds, Math.ceil(refused.retryAfterMs / 1000));
        await sleep(refused.retryAfterMs + 5);
        assert.equal((await limiter.consume(b, dear, rate, rate)).allowed, true, `after ${refused.retryAfterMs} ms at ${rate}/s`);
      }));
    });

    test('a request of no cost spends nothing and reports the bucket as it refills', async () => {
      const b = bucket();
      assert.equal(await drain(b, 5, 10, 10), 2);
      const empty = await limiter.consume(b, 0, 10, 10);
      assert.deepEqual({ ...empty, remaining: undefined }, { allowed: true, limit: 10, remaining: undefined, resetSeconds: 1, retryAfterMs: 0, retryAfterSeconds: 0 });
      assert.ok(empty.remaining <= 1, `remaining ${empty.remaining} right after spending the burst`);
      await sleep(250); // earns 2.5 units
      const later = await limiter.consume(b, 0, 10, 10);
      assert.ok(later.remaining >= 2 && later.remaining <= 10, `remaining ${later.remaining} after 250 ms at 10/s`);
      assert.ok((await limiter.consume(b, 0, 10, 10)).remaining >= later.remaining, 'asking again spent nothing');
    });

    test('concurrent requests on one bucket never admit more than the burst', async () => {
      const b = bucket();
      const decisions = await Promise.all(Array.from({ length: 40 }, () => limiter.consume(b, 1, 1, 10)));
      assert.equal(decisions.filter((d) => d.allowed).length, 10);
    });
  });
}
