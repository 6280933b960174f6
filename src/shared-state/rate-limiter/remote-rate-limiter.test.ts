import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { primaryWithWorkers } from '../../../test/helpers/primary-workers.ts';
import type { SharedStateClient } from '../protocol.ts';
import { rateLimiterContract } from './rate-limiter.contract.ts';
import { RemoteRateLimiter } from './remote-rate-limiter.ts';

/**
 * The workers' limits keep the rate limiter's contract, each call crossing the IPC messages as JSON: two workers of
 * one primary, taken in turn, so that what one spends the other sees (primary-process.test.ts runs it over node's
 * real channel). The contract's buckets are small: every call is decided by the primary. The busy buckets below are
 * leased to the workers in shares.
 */
const primary = primaryWithWorkers();
const opened: RemoteRateLimiter[] = [];
after(async () => {
  await Promise.all(opened.map((l) => l.close()));
  await primary.close();
});
const two = [primary.worker(), primary.worker()];
let turn = 0;

rateLimiterContract('worker (the primary, over IPC)', async () => {
  const limiters = two.map((w) => new RemoteRateLimiter(w));
  opened.push(...limiters);
  return { consume: (bucket, cost, rate, burst, credit) => limiters[turn++ % 2].consume(bucket, cost, rate, burst, credit), close: async () => {} };
});

/** A worker's limiter whose messages to the primary are counted; `gaveBack` settles at its first share given back. */
function worker(idleMs?: number) {
  const client = primary.worker();
  const sent = { lease: 0, giveBack: 0 };
  let heard!: () => void;
  const gaveBack = new Promise<void>((resolve) => { heard = resolve; });
  const counted = {
    call: ((svc: string, method: string, args: unknown[]) => {
      if (svc === 'limiter') sent[method as keyof typeof sent]++;
      const answer = (client.call as (s: string, m: string, a: unknown[]) => Promise<unknown>)(svc, method, args);
      if (method === 'giveBack') void answer.then(heard, () => {});
      return answer;
    }) as SharedStateClient['call'],
    on: client.on.bind(client),
  } satisfies SharedStateClient;
  const limiter = new RemoteRateLimiter(counted, idleMs);
  opened.push(limiter);
  return { limiter, sent, gaveBack };
}

/** Spends `cost` until refused; answers how many were admitted. */
async function drain(l: RemoteRateLimiter, b: string, cost: number, rate: number, burst: number): Promise<number> {
  let admitted = 0;
  while ((await l.consume(b, cost, rate, burst)).allowed) admitted++;
  return admitted;
}

// 0.001 unit per second: no unit is earned back while a test runs.
const SLOW = 0.001;

describe('busy buckets, leased to the workers', () => {
  test('the calls a share pays for are decided in the worker: one message for many calls', async () => {
    const { limiter, sent } = worker();
    const b = `busy:${randomUUID()}`;
    let allowed = 0;
    let decidedAtOnce = 0;
    for (let i = 0; i < 2000; i++) {
      const d = limiter.consume(b, 1, 1000, 100_000);
      if (!(d instanceof Promise)) decidedAtOnce++;
      const x = await d;
      if (x.allowed) allowed++;
      assert.ok(x.remaining <= x.limit, `remaining ${x.remaining} of ${x.limit}`);
    }
    assert.equal(allowed, 2000);
    assert.ok(decidedAtOnce >= 1990, `${decidedAtOnce} of 2000 calls decided at once`);
    assert.ok(sent.lease <= 5, `${sent.lease} messages for 2000 calls`);
  });

  test('two workers spending the one bucket together admit the burst once, not once each', async () => {
    const a = worker();
    const c = worker();
    const b = `busy:${randomUUID()}`;
    const [x, y] = await Promise.all([drain(a.limiter, b, 1, SLOW, 1000), drain(c.limiter, b, 1, SLOW, 1000)]);
    assert.ok(x + y >= 1000 && x + y <= 1001, `admitted ${x} + ${y} of a bucket of 1000`);
    // Near empty (two shares' worth left) every call is the primary's to decide: a refusal is never taken alone.
    assert.ok(a.sent.lease + c.sent.lease < 250, `${a.sent.lease + c.sent.lease} messages for ${x + y} calls`);
    assert.equal((await a.limiter.consume(b, 1, SLOW, 1000)).allowed, false);
    assert.equal((await c.limiter.consume(b, 1, SLOW, 1000)).allowed, false);
  });

  test('a share left unspent goes back to the bucket, where another worker spends it', async () => {
    const idle = worker(50);
    const busy = worker();
    const b = `busy:${randomUUID()}`;
    assert.equal((await idle.limiter.consume(b, 1, SLOW, 1000)).allowed, true);
    // The worker's round of idle shares does not hold a process open (its timer is unref'd): this test does, meanwhile.
    const open = setInterval(() => {}, 1000);
    await idle.gaveBack;
    clearInterval(open);
    const rest = await drain(busy.limiter, b, 1, SLOW, 1000);
    assert.ok(rest >= 999 && rest <= 1000, `the other worker spent ${rest} of the 999 left, the idle worker's share included`);
  });

  test('a call the share cannot pay for is decided by the primary, with the share given back: a refusal as one process has it', async () => {
    const { limiter } = worker();
    const b = `busy:${randomUUID()}`;
    assert.equal((await limiter.consume(b, 1, SLOW, 1000)).allowed, true);
    const refused = await limiter.consume(b, 1000, SLOW, 1000);
    assert.equal(refused.allowed, false, 'a call of the whole bucket after one unit is spent');
    assert.equal(refused.remaining, 999);
    assert.ok(refused.retryAfterSeconds >= 1);
    assert.equal((await limiter.consume(b, 999, SLOW, 1000)).allowed, true, 'the 999 left, share included, in one call');
    assert.equal((await limiter.consume(b, 1, SLOW, 1000)).allowed, false);
  });
});
