import { bucketShape, fullAt, tokenBucket, type BucketHolder, type BucketState, type RateDecision, type RateLimiter } from './rate-limiter.ts';

interface Kept extends BucketState {
  /** When the bucket is full again: the sweep forgets it then. */
  full: number;
  /** The limiter whose map holds it; undefined once swept (a holder's record is then looked up again). */
  of: MemoryRateLimiter | undefined;
}

/**
 * The in-process limiter (the default, and the fallback when Redis is unreachable). One small record per bucket,
 * changed in place; a coarse sweep every minute forgets buckets that are full again (a missing bucket is full).
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Kept>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweep = setInterval(() => {
      const t = this.now();
      for (const [k, b] of this.buckets) {
        if (b.full > t) continue;
        b.of = undefined;
        this.buckets.delete(k);
      }
    }, 60_000);
    this.sweep.unref();
  }

  /** Decided at once: no promise on every request's path (RateLimiter allows either). */
  consume(bucket: string, cost: number, rate: number, burst: number, credit = 0, holder?: BucketHolder): RateDecision {
    return this.consumeSync(bucket, cost, rate, burst, credit, holder);
  }

  /** The same, synchronously: for callers on the hot path that must not yield (the unknown-key guard). */
  consumeSync(bucket: string, cost: number, rate: number, burst: number, credit = 0, holder?: BucketHolder): RateDecision {
    const now = this.now();
    let kept = holder?.rateBucket as Kept | undefined;
    if (kept === undefined || kept.of !== this) {
      kept = this.buckets.get(bucket);
      if (holder !== undefined) holder.rateBucket = kept;
    }
    const { level, decision } = tokenBucket(kept, now, cost, rate, burst, credit);
    if (decision.allowed && (cost !== 0 || credit !== 0)) {
      const full = fullAt(level, now, bucketShape(rate, burst));
      if (kept) {
        kept.level = level;
        kept.at = now;
        kept.full = full;
      } else {
        const made: Kept = { level, at: now, full, of: this };
        this.buckets.set(bucket, made);
        if (holder !== undefined) holder.rateBucket = made;
      }
    }
    return decision;
  }

  /** Whether a request of `cost` would be admitted now, without spending (no entry: yes, and no allocation). */
  wouldAdmit(bucket: string, cost: number, rate: number, burst: number): boolean {
    const kept = this.buckets.get(bucket);
    if (kept === undefined) return true;
    return tokenBucket(kept, this.now(), cost, rate, burst).decision.allowed;
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
  }
}
