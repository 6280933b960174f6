import type { BudgetLimiter, BudgetShape, EventBudget } from './event-budget.ts';
import { MemoryEventBudget } from './memory-event-budget.ts';

/**
 * A budget held across gateway instances (cluster mode): Redis keeps the shared truth, so N instances
 * give a subject the burst once, not N times. The instance's own bucket answers first: it counts this instance's
 * events, which are part of the subject's, so when it is empty the shared one is too and no round trip is made
 * (an attacker flooding one instance is refused from memory past the burst). Only events and the `exhausted`
 * question (asked before dear work) reach Redis, never a request that causes no event. While Redis is away (the
 * gateway's ResilientRateLimiter says 'degraded', logs it once per outage, and checks for its return off the
 * request path) the local bucket alone decides, as on a single instance.
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

/**
 * The budget `name` as configured: shared through `limiter` when it keeps its buckets in Redis (cluster mode), else
 * this instance's alone (decided at once).
 */
export function eventBudget(name: string, shape: BudgetShape, limiter?: BudgetLimiter, now?: () => number): MemoryEventBudget | SharedEventBudget {
  return limiter && limiter.status() !== 'memory' ? new SharedEventBudget(name, shape, limiter, now) : new MemoryEventBudget(shape, now);
}
