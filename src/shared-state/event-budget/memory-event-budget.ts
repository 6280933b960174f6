import type { BudgetShape, EventBudget } from './event-budget.ts';
import { MemoryRateLimiter } from '../rate-limiter/memory-rate-limiter.ts';

/**
 * The budget of one instance alone, decided at once (no promise): the default, and the local bucket of the shared
 * budget. Its buckets are forgotten once full again (MemoryRateLimiter's sweep), so idle subjects cost nothing.
 */
export class MemoryEventBudget implements EventBudget {
  private readonly buckets: MemoryRateLimiter;

  constructor(private readonly shape: BudgetShape, now?: () => number) {
    this.buckets = new MemoryRateLimiter(now);
  }

  spend(subject: string): number | undefined {
    const d = this.buckets.consumeSync(subject, 1, this.shape.perSecond, this.shape.burst);
    return d.allowed ? undefined : d.retryAfterSeconds;
  }

  exhausted(subject: string): boolean {
    return !this.buckets.wouldAdmit(subject, 1, this.shape.perSecond, this.shape.burst);
  }

  close(): Promise<void> {
    return this.buckets.close();
  }
}
