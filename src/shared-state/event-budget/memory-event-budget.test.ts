import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventBudgetContract } from './event-budget.contract.ts';
import { MemoryEventBudget } from './memory-event-budget.ts';
import { eventBudget } from './shared-event-budget.ts';
import { MemoryRateLimiter } from '../rate-limiter/memory-rate-limiter.ts';

eventBudgetContract('memory', (shape) => new MemoryEventBudget(shape));

test('without Redis the budget is this instance\'s, and answers at once (no promise)', async () => {
  const limiter = Object.assign(new MemoryRateLimiter(), { status: () => 'memory' as const });
  const b = eventBudget('t', { perSecond: 1, burst: 1 }, limiter);
  assert.ok(b instanceof MemoryEventBudget);
  assert.equal(b.spend('x'), undefined);
  assert.equal(b.exhausted('x'), true);
  await Promise.all([b.close(), limiter.close()]);
});
