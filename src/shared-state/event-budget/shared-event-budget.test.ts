import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { pino } from 'pino';
import { eventBudgetContract } from './event-budget.contract.ts';
import { UNREACHABLE } from '../fallback.ts';
import { CONTRACT_BACKOFF } from '../login-backoff/login-backoff.contract.ts';
import { openSharedState, type SharedState } from '../open-shared-state.ts';
import type { OpenedRateLimiter } from '../rate-limiter/rate-limiter.ts';
import { SharedEventBudget } from './shared-event-budget.ts';
import { primaryWithWorkers } from '../../../test/helpers/primary-workers.ts';
import { REDIS_URL, redisSkipReason, removeKeys, testPrefix } from '../../../test/helpers/redis.ts';

const skip = await redisSkipReason('shared event budget suite');
const prefix = testPrefix();
after(() => (skip ? undefined : removeKeys(prefix)));
const quiet = pino({ level: 'silent' });

const opened: SharedState[] = [];
after(() => Promise.all(opened.map((s) => s.close())));

/** The shared state as one instance in cluster mode opens it: Redis, each kind falling back to memory. */
async function instance(url = REDIS_URL, log = quiet): Promise<SharedState> {
  const shared = await openSharedState({ redisUrl: url, redisTimeoutMs: 2000, redisPrefix: prefix, backoff: CONTRACT_BACKOFF, log });
  opened.push(shared);
  return shared;
}
/** Its limiter, where the shared budgets keep their buckets. */
const instanceLimiter = async (url = REDIS_URL, log = quiet): Promise<OpenedRateLimiter> => (await instance(url, log)).rateLimiter;

const limiter = skip ? undefined : await instanceLimiter();

eventBudgetContract('shared (Redis)', (shape) => new SharedEventBudget(`contract:${randomUUID()}`, shape, limiter!), { skip });

/** A worker's budgets, as the shared state opens them: in the primary, over IPC (two workers, taken in turn). */
const workers = primaryWithWorkers();
after(() => workers.close());
const two = await Promise.all([1, 2].map(() => openSharedState({ primary: workers.worker(), redisTimeoutMs: 200, backoff: CONTRACT_BACKOFF, log: quiet })));
opened.push(...two);
let turn = 0;
eventBudgetContract('shared (the primary, over IPC)', (shape) => {
  const name = `contract:${randomUUID()}`;
  const budgets = two.map((s) => s.eventBudgets(name, shape));
  return { spend: (subject) => budgets[turn++ % 2].spend(subject), exhausted: (subject) => budgets[turn++ % 2].exhausted(subject), close: async () => {} };
});

describe('shared event budget, specifically', { skip }, () => {
  test('three instances spending round-robin get the burst once in all, not three times', async () => {
    const three = [limiter!, await instanceLimiter(), await instanceLimiter()];
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
    const b = new SharedEventBudget(`down:${randomUUID()}`, { perSecond: 0.1, burst: 3 }, down);
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await b.spend('10.8.8.8'));
    assert.equal(answers.filter((a) => a === undefined).length, 3);
    assert.equal(await b.exhausted('10.8.8.8'), true);
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === UNREACHABLE && l.shared === 'per-second limits and failure guards');
    assert.equal(warnings.length, 1, lines.join(''));
    assert.ok(!lines.join('').includes('redis://'), 'the URL (it may hold a password) is not logged');
  });
});
