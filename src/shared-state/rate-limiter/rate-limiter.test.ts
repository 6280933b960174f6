import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import { tokenBucket, type BucketState } from './rate-limiter.ts';

/** A small seeded generator (mulberry32): the same instants on every run, so a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const RATES = [1, 3, 7, 330, 660, 1000, 5000];
const INSTANTS = 10_000;

describe('the token bucket step, at 10,000 random instants per rate', () => {
  for (const rate of RATES) {
    test(`at ${rate} units/s: a dear call on a full bucket passes, Remaining <= Limit, Retry-After admits`, () => {
      const rnd = random(rate);
      const burst = rate; // the plan's rate times limits.burstSeconds = 1: the tightest bucket
      let now = 1_735_689_600_000 + Math.floor(rnd() * 1e9); // realistic epoch ms, where doubles once lost the step
      const start = now;
      let state: BucketState | undefined;
      let fullFrom = now; // from this instant on the bucket is surely full (it is at the start)
      let admitted = 0;
      let maxCost = 0;
      let dearPassed = 0;
      const memory = new MemoryRateLimiter(() => now);
      for (let i = 0; i < INSTANTS; i++) {
        // Gaps from 0 to ~3 bucket-refills, so the bucket is seen empty, half full and full.
        now += Math.floor(rnd() * rnd() * 3000 * Math.max(1, burst / rate));
        const dear = rnd() < 0.3;
        const cost = dear ? burst + 1 + Math.floor(rnd() * burst * 2) : 1 + Math.floor(rnd() * burst);
        maxCost = Math.max(maxCost, cost);
        const { level, decision: d } = tokenBucket(state, now, cost, rate, burst);
        assert.deepEqual(memory.consumeSync('b', cost, rate, burst), d, 'the memory limiter decides as the step does');
        assert.ok(d.remaining <= d.limit, `remaining ${d.remaining} above limit ${d.limit}`);
        assert.equal(d.limit, burst);
        if (now >= fullFrom) assert.equal(d.allowed, true, `cost ${cost} refused on a full bucket of ${burst} at ${rate}/s`);
        if (d.allowed) {
          state = { level, at: now };
          admitted += cost;
          if (dear) dearPassed++;
          fullFrom = now + d.resetSeconds * 1000;
        } else {
          assert.equal(d.retryAfterSeconds, Math.max(1, Math.ceil(d.retryAfterMs / 1000)));
          assert.equal(tokenBucket(state, now + d.retryAfterMs, cost, rate, burst).decision.allowed, true, 'waiting retryAfterMs admits');
          assert.equal(tokenBucket(state, now + d.retryAfterSeconds * 1000, cost, rate, burst).decision.allowed, true, 'waiting Retry-After admits');
          if (d.retryAfterMs > 1) assert.equal(tokenBucket(state, now + d.retryAfterMs - 1, cost, rate, burst).decision.allowed, false, 'not a ms sooner');
        }
      }
      // Never more than a bucket (or the dearest call) plus what the rate earned over the whole run.
      assert.ok(admitted <= Math.max(burst, maxCost) + (rate * (now - start)) / 1000 + 1, `admitted ${admitted}`);
      assert.ok(dearPassed > 0, 'some dear calls passed');
      void memory.close();
    });
  }

  test('a refused request spends nothing, and a bucket never seen is full', () => {
    const first = tokenBucket(undefined, 5_000, 1000, 660, 660);
    assert.deepEqual(first.decision, { allowed: true, limit: 660, remaining: 0, resetSeconds: 2, retryAfterMs: 0, retryAfterSeconds: 0 });
    const again = tokenBucket({ level: first.level, at: 5_000 }, 5_000, 1, 660, 660);
    assert.equal(again.decision.allowed, false);
    assert.equal(again.level, first.level);
    assert.equal(again.decision.retryAfterMs, 517, '340 units owed and 1 asked, at 0.66 units per ms');
  });
});
