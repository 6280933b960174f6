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
