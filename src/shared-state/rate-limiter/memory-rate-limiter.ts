import { bucketShape, fullAt, tokenBucket, type BucketHolder, type BucketState, type RateDecision, type RateLimiter } from './rate-limiter.ts';

/** Slots the table starts with; it doubles when full. */
const FIRST_SLOTS = 1024;
/**
 * Numbers a slot holds side by side (level, as of, full again at, and its serial: a number no other bucket's slot had
 * or will have, 0 when free), and where each is.
 */
const STRIDE = 4;
const LEVEL = 0;
const AT = 1;
const FULL = 2;
const SERIAL = 3;

/**
 * The in-process limiter (the default, and the fallback when Redis is unreachable). Each bucket is a slot of one
 * typed array, its numbers (level, as of, full again at) side by side in 32 bytes, found by its name in one map: a
 * hundred thousand accounts' buckets are a few megabytes, which the processor's caches can hold, where an object per
 * bucket was scattered over the whole heap, a miss on each request of the long tail, and an object more for the
 * collector to mark; and a bucket of the long tail costs one line of memory, not one per number. A coarse sweep every
 * minute frees the slots of buckets that are full again (a missing bucket is full).
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly slots = new Map<string, number>();
  /** Each slot's bucket name (undefined: free): a holder's slot is its bucket's while the name there is the bucket's. */
  private names: Array<string | undefined> = [];
  private table = new Float64Array(FIRST_SLOTS * STRIDE);
  private readonly free: number[] = [];
  /** The last serial given to a slot. */
  private serials = 0;
  /** The state a step reads, one object reused: tokenBucket takes a state, and one made per request is garbage. */
  private readonly state: BucketState = { level: 0, at: 0 };
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweep = setInterval(() => {
      const t = this.now();
      for (const [name, slot] of this.slots) {
        if (this.table[slot * STRIDE + FULL] > t) continue;
        this.slots.delete(name);
        this.names[slot] = undefined;
        this.table[slot * STRIDE + SERIAL] = 0;
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
    // The holder's slot while its serial is the one the holder saw (the line the bucket's numbers are read from).
    let slot = holder?.rateBucket as number | undefined;
    if (slot === undefined || this.table[slot * STRIDE + SERIAL] !== holder!.rateSerial) {
      slot = this.slots.get(bucket);
      if (holder !== undefined) this.hold(holder, slot);
    }
    const { level, decision } = tokenBucket(this.stateOf(slot), now, cost, rate, burst, credit);
    if (decision.allowed && (cost !== 0 || credit !== 0)) {
      if (slot === undefined) {
        slot = this.take(bucket);
        if (holder !== undefined) this.hold(holder, slot);
      }
      const i = slot * STRIDE;
      const b = this.table;
      b[i + LEVEL] = level;
      b[i + AT] = now;
      b[i + FULL] = fullAt(level, now, bucketShape(rate, burst));
    }
    return decision;
  }

  private hold(holder: BucketHolder, slot: number | undefined): void {
    holder.rateBucket = slot;
    holder.rateSerial = slot === undefined ? 0 : this.table[slot * STRIDE + SERIAL];
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
    s.level = this.table[slot * STRIDE + LEVEL];
    s.at = this.table[slot * STRIDE + AT];
    return s;
  }

  /** A slot for a new bucket: a freed one, else the next, the table doubled when it is full. */
  private take(bucket: string): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.names.length;
      if (slot * STRIDE === this.table.length) {
        const b = new Float64Array(this.table.length * 2);
        b.set(this.table);
        this.table = b;
      }
      this.names.push(bucket);
    } else {
      this.names[slot] = bucket;
    }
    this.slots.set(bucket, slot);
    this.table[slot * STRIDE + SERIAL] = ++this.serials;
    return slot;
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
  }
}
