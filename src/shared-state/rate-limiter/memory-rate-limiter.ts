import { bucketShape, fullAt, tokenBucket, type BucketHolder, type BucketState, type RateDecision, type RateLimiter } from './rate-limiter.ts';

/** Slots the tables start with; they double when full. */
const FIRST_SLOTS = 1024;

/**
 * The in-process limiter (the default, and the fallback when Redis is unreachable). Each bucket is a slot of three
 * typed arrays (level, as of, full again at), found by its name in one map: a hundred thousand accounts' buckets are
 * a few megabytes side by side, which the processor's caches can hold, where an object per bucket was scattered
 * over the whole heap, a miss on each request of the long tail, and an object more for the collector to mark. A
 * coarse sweep every minute frees the slots of buckets that are full again (a missing bucket is full).
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly slots = new Map<string, number>();
  /** Each slot's bucket name (undefined: free): a holder's slot is its bucket's while the name there is the bucket's. */
  private names: Array<string | undefined> = [];
  private level = new Float64Array(FIRST_SLOTS);
  private at = new Float64Array(FIRST_SLOTS);
  private full = new Float64Array(FIRST_SLOTS);
  private readonly free: number[] = [];
  /** The state a step reads, one object reused: tokenBucket takes a state, and one made per request is garbage. */
  private readonly state: BucketState = { level: 0, at: 0 };
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweep = setInterval(() => {
      const t = this.now();
      for (const [name, slot] of this.slots) {
        if (this.full[slot] > t) continue;
        this.slots.delete(name);
        this.names[slot] = undefined;
        this.free.push(slot);
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
    let slot = holder?.rateBucket as number | undefined;
    if (slot === undefined || this.names[slot] !== bucket) {
      slot = this.slots.get(bucket);
      if (holder !== undefined) holder.rateBucket = slot;
    }
    const { level, decision } = tokenBucket(this.stateOf(slot), now, cost, rate, burst, credit);
    if (decision.allowed && (cost !== 0 || credit !== 0)) {
      if (slot === undefined) {
        slot = this.take(bucket);
        if (holder !== undefined) holder.rateBucket = slot;
      }
      this.level[slot] = level;
      this.at[slot] = now;
      this.full[slot] = fullAt(level, now, bucketShape(rate, burst));
    }
    return decision;
  }

  /** Whether a request of `cost` would be admitted now, without spending (no entry: yes, and no allocation). */
  wouldAdmit(bucket: string, cost: number, rate: number, burst: number): boolean {
    const slot = this.slots.get(bucket);
    if (slot === undefined) return true;
    return tokenBucket(this.stateOf(slot), this.now(), cost, rate, burst).decision.allowed;
  }

  /** The bucket in `slot` as tokenBucket reads it (undefined: no bucket, so full). */
  private stateOf(slot: number | undefined): BucketState | undefined {
    if (slot === undefined) return undefined;
    const s = this.state;
    s.level = this.level[slot];
    s.at = this.at[slot];
    return s;
  }

  /** A slot for a new bucket: a freed one, else the next, the tables doubled when they are full. */
  private take(bucket: string): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.names.length;
      if (slot === this.level.length) {
        const grow = (a: Float64Array) => {
          const b = new Float64Array(a.length * 2);
          b.set(a);
          return b;
        };
        this.level = grow(this.level);
        this.at = grow(this.at);
        this.full = grow(this.full);
      }
      this.names.push(bucket);
    } else {
      this.names[slot] = bucket;
    }
    this.slots.set(bucket, slot);
    return slot;
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
  }
}
