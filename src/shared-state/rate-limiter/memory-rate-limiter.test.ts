import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import { rateLimiterContract } from './rate-limiter.contract.ts';

rateLimiterContract('memory', async () => new MemoryRateLimiter());

describe('memory rate limiter, specifically', () => {
  test('wouldAdmit answers without spending, and consumeSync decides like consume', async () => {
    let now = 1_000_000;
    const limiter = new MemoryRateLimiter(() => now);
    assert.equal(limiter.wouldAdmit('ip', 1, 1, 2), true);
    assert.equal(limiter.consumeSync('ip', 1, 1, 2).remaining, 1);
    assert.equal(limiter.wouldAdmit('ip', 1, 1, 2), true);
    assert.equal(limiter.wouldAdmit('ip', 1, 1, 2), true, 'asking spent nothing');
    assert.equal((await limiter.consume('ip', 1, 1, 2)).allowed, true);
    assert.equal(limiter.wouldAdmit('ip', 1, 1, 2), false);
    now += 1000;
    assert.equal(limiter.wouldAdmit('ip', 1, 1, 2), true, 'one unit earned in a second at 1/s');
    await limiter.close();
  });
});

test("buckets read through holders: a holder's bucket swept when full again is not used, and every holder of a name shares one bucket", async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  let now = 1_000_000;
  const limiter = new MemoryRateLimiter(() => now);
  const a = { rateBucket: undefined as unknown, rateSerial: 0 };
  const b = { rateBucket: undefined as unknown, rateSerial: 0 };
  assert.equal(limiter.consume('acct', 2, 1, 3, 0, a).remaining, 1);
  assert.equal(limiter.consume('acct', 1, 1, 3, 0, b).remaining, 0, "b holds a's bucket");
  assert.equal(limiter.consume('acct', 1, 1, 3, 0, a).allowed, false, 'one bucket for both');
  // Full again after 3 s; the sweep forgets it, and a new one is made by the next call.
  now += 61_000;
  t.mock.timers.tick(60_000);
  assert.equal(limiter.consume('acct', 3, 1, 3, 0, a).remaining, 0, 'a new, full bucket');
  assert.equal(limiter.consume('acct', 1, 1, 3, 0, b).allowed, false, "b's swept bucket is not used: the new one is spent");
  assert.equal(limiter.consume('acct', 1, 1, 3).allowed, false, 'and it is the one found by name');
  await limiter.close();
});

test("a holder's bucket swept and its place given to another bucket is not read for it", async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  let now = 1_000_000;
  const limiter = new MemoryRateLimiter(() => now);
  const a = { rateBucket: undefined as unknown, rateSerial: 0 };
  assert.equal(limiter.consume('acct-a', 1, 1, 3, 0, a).remaining, 2);
  now += 61_000;
  t.mock.timers.tick(60_000);
  // Another account's bucket, made after the sweep, spent to the bottom.
  assert.equal(limiter.consume('acct-b', 3, 1, 3).remaining, 0);
  assert.equal(limiter.consume('acct-a', 1, 1, 3, 0, a).remaining, 2, "a's own bucket, full again: not b's");
  assert.equal(limiter.consume('acct-b', 1, 1, 3).allowed, false, "b's bucket is untouched by a");
  await limiter.close();
});
