import { bucketShape, levelAt, MICRO, type BucketShape, type RateDecision } from './rate-limiter.ts';

/**
 * A worker's call to the owner of the buckets (`limiter.lease`): it gives back its unspent share of `bucket`, says
 * what it spent of it, has this request's `cost` decided (0: none, only a refill of the share) and may be given a
 * new share. Quantities of shares are micro-units, as the buckets keep them.
 */
export interface LeaseAsk {
  bucket: string;
  rate: number;
  burst: number;
  cost: number;
  credit?: number;
  /** The cost of the calls the worker spends its share on: a share is worth holding only for many of them. */
  per: number;
  /** Unspent micro-units of its share the worker gives back. */
  back: number;
  /** Micro-units the worker spent from its share since it last said. */
  used: number;
}

export interface LeaseAnswer {
  /** The request's decision, as the memory limiter takes it (a cost of 0 is always admitted). */
  decision: RateDecision;
  /** Micro-units added to the worker's share. */
  grant: number;
  /** Micro-units the rest of the account holds (its bucket, the other workers' shares): for the decisions the worker takes alone. */
  rest: number;
}

/** A worker's share given back unasked (it spent nothing of it for a while). */
export interface ShareReturn { bucket: string; back: number; used: number }

/** A share is this part of a bucket: a worker holds at most one, so N workers hold at most N/16 of it. */
const SHARE_PARTS = 16;
/** A share smaller than this many calls saves too few round trips to be worth leaving a worker's hands. */
const MIN_CALLS = 16;

/** The share a worker holds of a bucket of `cap` micro-units, for calls of `per` units; 0 when none is worth it. */
export function shareSize(cap: number, per: number): number {
  const size = Math.floor(cap / SHARE_PARTS);
  return per > 0 && size >= MIN_CALLS * per * MICRO ? size : 0;
}

interface Owned {
  /** Micro-units in the bucket as of `at`, not counting the shares. */
  level: number;
  at: number;
  /** Micro-units in the workers' shares (counted until a worker says it spent or gave them back). */
  held: number;
  holders: Map<number, number>;
  shape: BucketShape;
}

/**
 * The per-second buckets of `--workers N`, owned by the primary and leased to the workers (token-bucket leasing): a
 * worker spends from a share of an account's bucket in its own memory, with no message per request, and asks for
 * more when its share runs low or cannot pay for a call. The bucket refills only up to its size less the shares out,
 * so what the workers may spend (the bucket and every share) never exceeds what one process's bucket holds: over
 * any interval at most the burst plus what the rate earned is admitted, however the workers spend. A share is lent
 * only from a bucket that keeps at least another share's worth itself: near empty, every call is decided here, as
 * one process decides it (and a refusal is always decided here). A worker that stops (or dies) leaves its shares to
 * the bucket.
 */
export class LeasedBuckets {
  private readonly buckets = new Map<string, Owned>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweep = setInterval(() => this.forgetFull(), 60_000);
    this.sweep.unref();
  }

  /** Settles `worker`'s share, decides `ask.cost`, and lends a new share when the bucket is rich enough. */
  lease(ask: LeaseAsk, worker: number): LeaseAnswer {
    const shape = bucketShape(ask.rate, ask.burst);
    const b = this.bucketAt(ask.bucket, shape);
    this.settle(b, worker, ask.back, ask.used);
    const decision = this.decide(b, ask.cost, ask.credit ?? 0);
    let grant = 0;
    const size = decision.allowed ? shareSize(shape.cap, ask.per) : 0;
    const mine = b.holders.get(worker) ?? 0;
    if (size > mine && b.level - (size - mine) >= size) {
      grant = size - mine;
      b.level -= grant;
      b.held += grant;
      b.holders.set(worker, size);
    }
    return { decision, grant, rest: b.level + b.held - (b.holders.get(worker) ?? 0) };
  }

  /** A share given back (or spent) without a request to decide. */
  giveBack(r: ShareReturn, worker: number): void {
    const b = this.buckets.get(r.bucket);
    if (b) this.settle(this.bucketAt(r.bucket, b.shape), worker, r.back, r.used);
  }

  /** A worker that stopped: what it held is no longer spent by anyone, so the bucket may refill into it. */
  gone(worker: number): void {
    for (const [name, b] of this.buckets) {
      const mine = b.holders.get(worker);
      if (mine === undefined) continue;
      this.bucketAt(name, b.shape);
      b.held -= mine;
      b.holders.delete(worker);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
  }

  /** The bucket, its level brought to now (refilled up to its size less the shares out). */
  private bucketAt(name: string, shape: BucketShape): Owned {
    const now = this.now();
    let b = this.buckets.get(name);
    if (b === undefined) {
      b = { level: shape.cap, at: now, held: 0, holders: new Map(), shape };
      this.buckets.set(name, b);
      return b;
    }
    b.level = levelAt(b, now, { cap: shape.cap - b.held, perMs: shape.perMs });
    b.at = now;
    b.shape = shape;
    return b;
  }

  /** `back` returns to the bucket; `used` was spent: neither is held any longer. */
  private settle(b: Owned, worker: number, back: number, used: number): void {
    const mine = b.holders.get(worker) ?? 0;
    const out = Math.min(mine, back + used);
    if (out <= 0) return;
    const returned = Math.min(back, out);
    b.held -= out;
    b.level = Math.min(b.shape.cap - b.held, b.level + returned);
    if (mine === out) b.holders.delete(worker);
    else b.holders.set(worker, mine - out);
  }

  /**
   * The memory limiter's step (rate-limiter.ts `tokenBucket`) on what is in the bucket: the same decision when no
   * share is out. The bucket is full when it holds all but the shares out: a full bucket admits any call (so that a
   * call dearer than the bucket can pass at all), and the shares out stay their workers' to spend. That is the one
   * slack against one process: after a call dearer than what the bucket holds, on a full bucket, at most the shares
   * out (a sixteenth of the bucket per worker) are admitted above one process's bound.
   */
  private decide(b: Owned, cost: number, credit: number): RateDecision {
    const { cap, perMs } = b.shape;
    const top = cap - b.held;
    const want = cost * MICRO;
    const judged = credit > 0 ? Math.min(top, b.level + credit * MICRO) : b.level;
    const allowed = want <= judged || judged === top;
    if (want < 0) b.level = Math.min(top, b.level - want);
    else if (allowed) b.level = judged - want;
    const total = b.level + b.held;
    const retryAfterMs = allowed ? 0 : Math.ceil((Math.min(want, top) - judged) / perMs);
    return {
      allowed,
      limit: Math.floor(cap / MICRO),
      remaining: total > 0 ? Math.floor(total / MICRO) : 0,
      resetSeconds: Math.ceil(Math.ceil((cap - total) / perMs) / 1000),
      retryAfterMs,
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(retryAfterMs / 1000)),
    };
  }

  /** Buckets full again with no share out are forgotten (a bucket never seen is full). */
  private forgetFull(): void {
    for (const [name, b] of this.buckets) {
      if (b.held === 0 && this.bucketAt(name, b.shape).level >= b.shape.cap) this.buckets.delete(name);
    }
  }
}
