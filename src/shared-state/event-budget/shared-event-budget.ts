import type { BudgetLimiter, BudgetShape, EventBudget, EventBudgets } from './event-budget.ts';
import { MemoryEventBudget } from './memory-event-budget.ts';

/**
 * A budget held across processes (instances through Redis, workers through their primary): the shared limiter keeps
 * the shared truth, so N processes give a subject the burst once, not N times. The process's own bucket answers
 * first: it counts this process's events, which are part of the subject's, so when it is empty the shared one is
 * too and no round trip is made (an attacker flooding one instance is refused from memory past the burst). Only
 * events and the `exhausted` question (asked before dear work) reach the shared limiter, never a request that causes
 * no event. While its store is away (the limiter says 'degraded': the shared state's fallback logs it once per
 * outage, and checks for its return off the request path) the local bucket alone decides, as on a single process.
 */
export class SharedEventBudget implements EventBudget {
  private readonly local: MemoryEventBudget;

  /** `name` keeps this budget's buckets apart from the others' in the shared limiter. */
  constructor(private readonly name: string, private readonly shape: BudgetShape, private readonly shared: BudgetLimiter, now?: () => number) {
    this.local = new MemoryEventBudget(shape, now);
  }

  spend(subject: string): number | undefined | Promise<number | undefined> {
    const local = this.local.spend(subject);
    if (local !== undefined || !sharing(this.shared)) return local;
    const d = this.shared.consume(this.bucket(subject), 1, this.shape.perSecond, this.shape.burst);
    if (!(d instanceof Promise)) return d.allowed ? undefined : d.retryAfterSeconds;
    return d.then((x) => (x.allowed ? undefined : x.retryAfterSeconds));
  }

  exhausted(subject: string): boolean | Promise<boolean> {
    if (this.local.exhausted(subject) || !sharing(this.shared)) return this.local.exhausted(subject);
    // A request of no cost spends nothing and reports what the bucket holds.
    const d = this.shared.consume(this.bucket(subject), 0, this.shape.perSecond, this.shape.burst);
    return d instanceof Promise ? d.then((x) => x.remaining < 1) : d.remaining < 1;
  }

  close(): Promise<void> {
    return this.local.close();
  }

  private bucket(subject: string): string {
    return `${this.name}:${subject}`;
  }
}

/** Whether the limiter keeps its buckets where every process sees them now (Redis, or the workers' primary). */
function sharing(limiter: BudgetLimiter): boolean {
  const s = limiter.status();
  return s === 'redis' || s === 'primary';
}

/** Budgets shared through `limiter` (the shared state's, when it is Redis or the workers' primary). */
export function sharedEventBudgets(limiter: BudgetLimiter): EventBudgets {
  return (name, shape, now) => new SharedEventBudget(name, shape, limiter, now);
}
