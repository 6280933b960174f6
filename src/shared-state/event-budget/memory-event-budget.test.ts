import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { eventBudgetContract } from './event-budget.contract.ts';
import { MemoryEventBudget } from './memory-event-budget.ts';
import { CONTRACT_BACKOFF } from '../login-backoff/login-backoff.contract.ts';
import { openSharedState } from '../open-shared-state.ts';

eventBudgetContract('memory', (shape) => new MemoryEventBudget(shape));

test('without Redis or a primary the budget is this process\'s, and answers at once (no promise)', async () => {
  const shared = await openSharedState({ redisTimeoutMs: 200, backoff: CONTRACT_BACKOFF, log: pino({ level: 'silent' }) });
  const b = shared.eventBudgets('t', { perSecond: 1, burst: 1 });
  assert.ok(b instanceof MemoryEventBudget);
  assert.equal(b.spend('x'), undefined);
  assert.equal(b.exhausted('x'), true);
  await Promise.all([b.close(), shared.close()]);
});
