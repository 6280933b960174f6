/**
 * Per-second compute-unit limits (DECISIONS 7) as GCRA, the token bucket without a timer: each bucket keeps one
 * number, the theoretical arrival time (TAT). A request of `cost` units moves TAT by cost/rate seconds; it is
 * admitted while TAT stays within `burst` units of now. No fixed window, so nothing admits double at an edge.
 * Memory and Redis implement this one interface; `rate-limiter.contract.ts` runs against both.
 */
export interface RateDecision {
  allowed: boolean;
  /** Units per second of the bucket (RateLimit-Limit). */
  limit: number;
  /** Units that could still be spent right now (RateLimit-Remaining). */
  remaining: number;
  /** Seconds until the bucket is full again (RateLimit-Reset). */
  resetSeconds: number;
  /** When refused: seconds until this request would be admitted; 0 when allowed. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Spends `cost` units of `bucket` if the bucket admits them, atomically; a refused request spends nothing.
   * `burst` is the bucket size in units; a request costing more than the burst is admitted when the bucket is full.
   */
  consume(bucket: string, cost: number, ratePerSecond: number, burst: number): Promise<RateDecision>;
  close(): Promise<void>;
}

/**
 * The GCRA step, shared by the memory limiter and (as Lua) the Redis one. Times in ms.
 * Returns the new TAT (unchanged when refused) and the decision.
 */
export function gcra(tat: number, now: number, cost: number, rate: number, burst: number): { tat: number; decision: RateDecision } {
  const per = 1000 / rate; // ms per unit
  const tolerance = Math.max(burst, cost) * per;
  const base = Math.max(tat, now);
  const next = base + cost * per;
  const allowed = next - now <= tolerance;
  const newTat = allowed ? next : base;
  const debt = newTat - now; // ms of units outstanding
  return {
    tat: newTat,
    decision: {
      allowed,
      limit: rate,
      remaining: Math.max(0, Math.floor((Math.max(burst, cost) * per - debt) / per)),
      resetSeconds: Math.ceil(debt / 1000),
      retryAfterSeconds: allowed ? 0 : Math.ceil(next - now - tolerance) / 1000,
    },
  };
}
