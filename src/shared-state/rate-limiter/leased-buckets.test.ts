import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { SharedStateClient } from '../protocol.ts';
import { LeasedBuckets, type LeaseAsk, type ShareReturn } from './leased-buckets.ts';
import { RemoteRateLimiter } from './remote-rate-limiter.ts';

/** A small seeded generator (mulberry32): the same steps on every run, so a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Worker `id`'s client of `owner`, answering in the next microtask (the clock is the test's). */
function clientOf(owner: LeasedBuckets, id: number): SharedStateClient {
  const call = (svc: string, method: string, [arg]: unknown[]) => {
    if (svc !== 'limiter') return Promise.reject(new Error(`${svc}.${method}`));
    return Promise.resolve(method === 'lease' ? owner.lease(arg as LeaseAsk, id) : owner.giveBack(arg as ShareReturn, id));
  };
  return { call: call as SharedStateClient['call'], on: () => {} };
}

const closing: Array<{ close(): Promise<void> }> = [];
after(() => Promise.all(closing.map((c) => c.close())));

describe('buckets leased to three workers, at 5,000 random steps per rate', () => {
  for (const [rate, burst] of [[100, 1000], [1000, 10_000], [5000, 5000]]) {
    test(`at ${rate} units/s, a bucket of ${burst}: never more than the bucket and what the rate earned`, async () => {
      const rnd = random(rate);
      let now = 1_735_689_600_000;
      const start = now;
      const owner = new LeasedBuckets(() => now);
      const workers = [1, 2, 3].map((id) => new RemoteRateLimiter(clientOf(owner, id), 3_600_000));
      closing.push(owner, ...workers);
      let admitted = 0;
      let refused = 0;
      for (let i = 0; i < 5000; i++) {
        // About one unit earned a step, three spent: the bucket is seen full, half full and empty.
        if (rnd() < 0.1) now += Math.floor((rnd() * 20_000) / rate);
        const cost = 1 + Math.floor(rnd() * 5);
        const d = await workers[Math.floor(rnd() * 3)].consume('b', cost, rate, burst);
        if (d.allowed) admitted += cost;
        else refused++;
        assert.ok(d.remaining <= d.limit, `remaining ${d.remaining} above ${d.limit}`);
        const bound = burst + (rate * (now - start)) / 1000 + 1;
        assert.ok(admitted <= bound, `step ${i}: admitted ${admitted}, bound ${bound.toFixed(1)}`);
      }
      assert.ok(refused > 0, 'the bucket was spent, so some calls were refused');
    });
  }
});

describe('the owner of the buckets', () => {
  test("a worker that stopped leaves its share to the bucket, which refills into it", () => {
    let now = 0;
    const owner = new LeasedBuckets(() => now);
    closing.push(owner);
    const ask = (worker: number, per: number) => owner.lease({ bucket: 'b', rate: 10, burst: 1000, cost: 1, per, back: 0, used: 0 }, worker);
    /** Worker 2 spends, one unit a call and never a share, until refused. */
    const drain = () => {
      let n = 0;
      while (ask(2, 0).decision.allowed) n++;
      return n;
    };
    assert.equal(ask(1, 1).grant, 62_500_000, 'a sixteenth of the bucket lent to worker 1');
    now += 1_000_000;
    assert.equal(drain(), 937, 'the bucket refills only up to its size less the share out');
    owner.gone(1);
    now += 1_000_000;
    assert.equal(drain(), 1000, 'the whole bucket, once the share went back');
  });

  test('no share is lent from a small bucket, or from one near empty: the owner decides every call there', () => {
    const owner = new LeasedBuckets(() => 0);
    closing.push(owner);
    const ask = (bucket: string, burst: number, cost: number, worker = 1) => owner.lease({ bucket, rate: 1, burst, cost, per: 1, back: 0, used: 0 }, worker);
    assert.equal(ask('small', 100, 1).grant, 0, 'a sixteenth of 100 is under 16 calls');
    assert.equal(ask('big', 1000, 1).grant, 62_500_000);
    assert.equal(ask('big', 1000, 870, 2).grant, 0, 'the 66.5 units left are not two shares');
  });
});
