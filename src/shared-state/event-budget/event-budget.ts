import type { RateDecision, RateLimiterStatus } from '../rate-limiter/rate-limiter.ts';

/**
 * A budget of events per subject (failed authentications per client address, new sessions per address, management
 * calls per account): each event spends one from the subject's token bucket; once it is empty the caller refuses
 * the subject's next events. Kept in memory (memory-event-budget.ts, one process alone) or in memory and the shared
 * limiter (shared-event-budget.ts: Redis for instances, the primary for workers, so that the bound holds across
 * them); event-budget.contract.ts runs against each. An answer decided in the process comes at once (no promise),
 * one that asked the shared limiter as a promise.
 */
export interface EventBudget {
  /** One event of `subject`: undefined while it had one left (spent now), else the seconds until it has one again. */
  spend(subject: string): number | undefined | Promise<number | undefined>;
  /** Whether `subject` has no event left, spending nothing (asked before work that is dear in itself). */
  exhausted(subject: string): boolean | Promise<boolean>;
}

/** The limiter a shared budget keeps its shared buckets in (the gateway's OpenedRateLimiter). */
export interface BudgetLimiter {
  consume(bucket: string, cost: number, ratePerSecond: number, burst: number): RateDecision | Promise<RateDecision>;
  /**
   * 'memory': nothing is shared (no Redis configured); 'primary': shared by the workers through their primary;
   * 'degraded': Redis (or the primary) is away, keep to the local bucket.
   */
  status(): RateLimiterStatus;
}

/**
 * How the parts that bound events make their budgets, one per `name` (its buckets apart from the others'): the
 * shared state's choice (open-shared-state.ts), made once at start.
 */
export type EventBudgets = (name: string, shape: BudgetShape, now?: () => number) => EventBudget;

/** A bucket's shape: events per second and the burst (events at once). */
export interface BudgetShape {
  perSecond: number;
  burst: number;
}
