/**
 * Per-second compute-unit limits (docs/decisions.md §7) as a token bucket kept in integers, so that no rounding can ever
 * refuse what the rules admit (a double GCRA step refused a 1,000-unit trace on a full 660-unit bucket for ever).
 * A bucket holds `level` micro-units (10^-6 of a unit) as of `at` (ms); it refills at `rate` units per second, that
 * is `rate * 1000` micro-units per ms, up to `burst` units. Every quantity is an integer below 2^53, so the memory
 * limiter (JavaScript) and the Redis one (Lua) compute exactly the same thing. Memory, Redis and the workers' primary
 * (over IPC) implement the one interface below; `rate-limiter.contract.ts` runs against each.
 */
export interface RateDecision {
  allowed: boolean;
  /** Units the bucket holds when full (RateLimit-Limit). */
  limit: number;
  /** Units that could still be spent right now, never above `limit` (RateLimit-Remaining). */
  remaining: number;
  /** Seconds until the bucket is full again (RateLimit-Reset). */
  resetSeconds: number;
  /** When refused: ms until this request would be admitted, if nothing else is spent meanwhile; 0 when allowed. */
  retryAfterMs: number;
  /** `retryAfterMs` in whole seconds, at least 1 when refused (Retry-After and `data.retryAfter`); 0 when allowed. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Spends `cost` units of `bucket` if the bucket admits them, atomically; a refused request spends nothing.
   * `burst` is the bucket size in units; a request costing more than the burst is admitted whenever the bucket is full.
   * A negative `cost` gives units back (a refund), up to a full bucket.
   * `credit`: units this request already spent at admission (before its body was read): the decision is taken as
   * if they were still in the bucket, and they count towards `cost`; refused, they stay spent (they paid for the read).
   * A limiter that decides in the process answers at once (no promise: the memory limiter, on every request's
   * path twice); one that asks Redis answers with a promise.
   */
  consume(bucket: string, cost: number, ratePerSecond: number, burst: number, credit?: number, holder?: BucketHolder): RateDecision | Promise<RateDecision>;
  close(): Promise<void>;
}

/**
 * Where a caller keeps its bucket's record between requests (a key's resolution, for its account's bucket): a limiter
 * in the process reads the bucket there instead of looking it up by name (with a long tail of accounts, a lookup in a
 * map of every bucket is a chain of reads the processor's caches do not hold); any other ignores it. One holder, one
 * bucket name. `rateSerial`: the limiter's mark that the record is still that bucket's (0 to start with).
 */
export interface BucketHolder { rateBucket: unknown; rateSerial: number }

/** Where the buckets are kept: this process alone, Redis, the workers' primary, or this process while those fail. */
export type RateLimiterStatus = 'memory' | 'redis' | 'primary' | 'degraded';

/** The gateway's limiter, as the shared state opens it: it says where it keeps its buckets (for /readyz). */
export interface OpenedRateLimiter extends RateLimiter {
  status(): RateLimiterStatus;
}

/** Micro-units per unit: rates are exact to 0.001 unit per second. */
export const MICRO = 1_000_000;

/** A bucket as stored: micro-units (negative after a request dearer than the burst) as of `at` ms. */
export interface BucketState {
  level: number;
  at: number;
}

/** The integer parameters of a bucket. */
export interface BucketShape {
  /** Micro-units when full. */
  cap: number;
  /** Micro-units earned per ms. */
  perMs: number;
}

/** `rate` units/s and `burst` units as integers; a bucket holds at least one unit and earns at least 1 µunit/ms. */
export function bucketShape(rate: number, burst: number): BucketShape {
  return { cap: Math.max(MICRO, Math.round(burst * MICRO)), perMs: Math.max(1, Math.round(rate * 1000)) };
}

/** The level at `now` of a bucket last seen as `s` (undefined: never used, so full). */
export function levelAt(s: BucketState | undefined, now: number, shape: BucketShape): number {
  if (s === undefined) return shape.cap;
  const dt = now - s.at;
  if (dt <= 0) return s.level; // a clock that stepped back earns nothing
  const missing = shape.cap - s.level;
  if (missing <= 0 || dt >= Math.ceil(missing / shape.perMs)) return shape.cap;
  return s.level + dt * shape.perMs;
}

/**
 * One step, shared by the memory limiter and (as the same Lua) the Redis one: the bucket's level now, whether
 * `cost` fits, and the level after. A request of no cost is always admitted and spends nothing.
 */
export function tokenBucket(s: BucketState | undefined, now: number, cost: number, rate: number, burst: number, credit = 0): { level: number; decision: RateDecision } {
  const shape = bucketShape(rate, burst);
  const level = levelAt(s, now, shape);
  const want = cost * MICRO;
  // The units spent at admission are judged as if still there (so a trace on a bucket full before admission passes).
  const judged = credit > 0 ? Math.min(shape.cap, level + credit * MICRO) : level;
  // A full bucket admits anything: otherwise a call dearer than the bucket (a trace) could never pass. A negative
  // cost is a refund (work refused after it was admitted): it gives units back, never past the full bucket.
  const allowed = want <= judged || judged === shape.cap;
  const after = want < 0 ? Math.min(shape.cap, level - want) : allowed ? judged - want : level;
  let retryAfterMs = 0;
  if (!allowed) retryAfterMs = Math.ceil((Math.min(want, shape.cap) - judged) / shape.perMs);
  return {
    level: after,
    decision: {
      allowed,
      limit: Math.floor(shape.cap / MICRO),
      remaining: after > 0 ? Math.floor(after / MICRO) : 0,
      resetSeconds: Math.ceil(Math.ceil((shape.cap - after) / shape.perMs) / 1000),
      retryAfterMs,
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(retryAfterMs / 1000)),
    },
  };
}

/** When the bucket, at `level` as of `now`, is full again (ms): after that its state need not be kept. */
export function fullAt(level: number, now: number, shape: BucketShape): number {
  return level >= shape.cap ? now : now + Math.ceil((shape.cap - level) / shape.perMs);
}
