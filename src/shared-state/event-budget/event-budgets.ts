import type { BudgetShape, EventBudget, EventBudgets } from './event-budget.ts';
import { MemoryEventBudget } from './memory-event-budget.ts';

/** One process's budgets: decided at once (no promise). */
export const memoryEventBudgets: EventBudgets = (_name, shape, now) => new MemoryEventBudget(shape, now);

/** Budget `name` made by `budgets` (the shared state's), or this process's own when none is given (tests, tools). */
export function eventBudget(name: string, shape: BudgetShape, budgets?: EventBudgets, now?: () => number): EventBudget {
  return (budgets ?? memoryEventBudgets)(name, shape, now);
}
