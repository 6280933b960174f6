import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { pino } from 'pino';
import { eventBudgetContract } from './event-budget.contract.ts';
import { RedisRateLimiter } from '../rate-limiter/redis-rate-limiter.ts';
import { ResilientRateLimiter } from '../fallback.ts';
import { SharedEventBudget } from './shared-event-budget.ts';
import { REDIS_URL, redisSkipReason, removeKeys, testPrefix } from '../../../test/helpers/redis.ts';

const skip = await redisSkipReason('shared event budget suite');
const prefix = testPrefix();
after(() => (skip ? undefined : removeKeys(prefix)));
const quiet = pino({ level: 'silent' });

/** The gateway's limiter as one instance in cluster mode has it: Redis, falling back to memory. */
async function instanceLimiter(url = REDIS_URL, log = quiet): Promise<ResilientRateLimiter> {
  const shared = new RedisRateLimiter({ url, prefix });
  const degraded = await shared.connect().then(() => false, () => true);
  return new ResilientRateLimiter({ shared, log, degraded });
}

const limiters: ResilientRateLimiter[] = [];
after(() => Promise.all(limiters.map((l) => l.close())));
const limiter = skip ? undefined : await instanceLimiter();
if (limiter) limiters.push(limiter);

eventBudgetContract('shared (Redis)', (shape) => new SharedEventBudget(`contract:${randomUUID()}`, shape, limiter!), { skip });

describe('shared event budget, specifically', { skip }, () => {
  test('three instances spending round-robin get the burst once in all, not three times', async () => {
    const three = [limiter!, await instanceLimiter(), await instanceLimiter()];
    limiters.push(three[1], three[2]);
    const name = `spread:${randomUUID()}`;
    const budgets = three.map((l) => new SharedEventBudget(name, { perSecond: 0.1, burst: 6 }, l));
    const answers = [];
    for (let i = 0; i < 18; i++) answers.push(await budgets[i % 3].spend('10.1.2.3'));
    assert.equal(answers.filter((a) => a === undefined).length, 6, `admitted: ${answers.map((a) => (a === undefined ? 'ok' : a)).join(' ')}`);
    // An instance that saw only two of the failures knows from Redis that none is left.
    const fresh = new SharedEventBudget(name, { perSecond: 0.1, burst: 6 }, three[2]);
    assert.equal(await fresh.exhausted('10.1.2.3'), true);
    assert.equal(await fresh.exhausted('10.1.2.4'), false);
  });

  test('once its own bucket is empty, an instance answers from memory without asking Redis', async () => {
    const b = new SharedEventBudget(`local:${randomUUID()}`, { perSecond: 0.1, burst: 2 }, limiter!);
    assert.ok(b.spend('10.9.9.9') instanceof Promise, 'an event with room in the local bucket is counted in Redis');
    await b.spend('10.9.9.9');
    const refused = b.spend('10.9.9.9');
    assert.equal(refused, 10, 'decided at once: not a promise');
    assert.equal(b.exhausted('10.9.9.9'), true, 'decided at once: not a promise');
  });

  test('with Redis unreachable, each instance keeps its own bucket and says so in one line, not one per event', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const down = await instanceLimiter('redis://127.0.0.1:1', log);
    limiters.push(down);
    const b = new SharedEventBudget(`down:${randomUUID()}`, { perSecond: 0.1, burst: 3 }, down);
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await b.spend('10.8.8.8'));
    assert.equal(answers.filter((a) => a === undefined).length, 3);
    assert.equal(await b.exhausted('10.8.8.8'), true);
    const warnings = lines.filter((l) => l.includes('Redis unreachable'));
    assert.equal(warnings.length, 1, lines.join(''));
    assert.ok(!warnings[0].includes('redis://'), 'the URL (it may hold a password) is not logged');
  });
});
