import { gcra, type RateDecision, type RateLimiter } from './rate-limiter.ts';

/**
 * The in-process limiter (the default, and the fallback when Redis is unreachable). One number per bucket; a
 * coarse sweep every minute forgets buckets whose TAT has passed (they are full again anyway).
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly tats = new Map<string, number>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweep = setInterval(() => {
      const t = this.now();
      for (const [k, tat] of this.tats) if (tat <= t) this.tats.delete(k);
    }, 60_000);
    this.sweep.unref();
  }

  async consume(bucket: string, cost: number, rate: number, burst: number): Promise<RateDecision> {
    return this.consumeSync(bucket, cost, rate, burst);
  }

  /** The same, synchronously: for callers on the hot path that must not yield (the unknown-key guard). */
  consumeSync(bucket: string, cost: number, rate: number, burst: number): RateDecision {
    const now = this.now();
    const { tat, decision } = gcra(this.tats.get(bucket) ?? now, now, cost, rate, burst);
    if (decision.allowed) this.tats.set(bucket, tat);
    return decision;
  }

  /** Whether a request of `cost` would be admitted now, without spending (no entry: yes, and no allocation). */
  wouldAdmit(bucket: string, cost: number, rate: number, burst: number): boolean {
    const tat = this.tats.get(bucket);
    if (tat === undefined) return true;
    return gcra(tat, this.now(), cost, rate, burst).decision.allowed;
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
  }
}
