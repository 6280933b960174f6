import type { SharedStateClient } from '../protocol.ts';
import { shareSize, type LeaseAnswer } from './leased-buckets.ts';
import { bucketShape, MICRO, type RateDecision, type RateLimiter } from './rate-limiter.ts';

/** What this worker holds of one account's bucket. */
interface Share {
  rate: number;
  burst: number;
  cap: number;
  perMs: number;
  /** Micro-units this worker may still spend alone. */
  left: number;
  /** Micro-units spent from the share that the primary has not been told of yet. */
  used: number;
  /** The rest of the account (its bucket and the other workers' shares) as the primary last said. */
  rest: number;
  /** Below this many micro-units left, a refill is asked for while the share still pays. */
  low: number;
  /** A refill is on its way. */
  topping: boolean;
  /** Spent from since the last idle round. */
  active: boolean;
}

/**
 * The per-second limits of a worker of `--workers N`: the primary owns every account's bucket (leased-buckets.ts)
 * and lends this worker a share of a busy one; a call the share pays for is decided here, at once, with no message;
 * a share running low is refilled in the background, one message for many calls; a call it cannot pay for (and
 * every refusal, refund and call on a small bucket) is decided by the primary, this worker's share given back in the
 * same message. A share nothing was spent from for a round of `idleMs` goes back to the bucket. A decision taken
 * here says the `remaining` of the account as of the share's last refill: what the other workers spent since is not
 * in it. A primary that does not answer in time fails the call (the shared state's fallback then decides in this
 * worker's memory).
 */
export class RemoteRateLimiter implements RateLimiter {
  private readonly shares = new Map<string, Share>();
  private readonly idle: NodeJS.Timeout;

  constructor(private readonly primary: SharedStateClient, idleMs = 1000) {
    this.idle = setInterval(() => this.giveBackIdle(), idleMs);
    this.idle.unref();
  }

  consume(bucket: string, cost: number, rate: number, burst: number, credit = 0): RateDecision | Promise<RateDecision> {
    const s = this.shares.get(bucket);
    const need = (cost - credit) * MICRO;
    if (s !== undefined && cost > 0 && need >= 0 && need <= s.left && s.rate === rate && s.burst === burst) {
      s.left -= need;
      s.used += need;
      s.active = true;
      if (!s.topping && s.left < s.low) this.topUp(bucket, s, cost);
      return alone(s);
    }
    return this.ask(bucket, cost, rate, burst, credit);
  }

  async close(): Promise<void> {
    clearInterval(this.idle);
    for (const [bucket, s] of this.shares) this.giveBack(bucket, s);
    this.shares.clear();
  }

  /** Decided by the primary, this worker's share given back with the call. */
  private ask(bucket: string, cost: number, rate: number, burst: number, credit: number): Promise<RateDecision> {
    const s = this.shares.get(bucket);
    const back = s?.left ?? 0;
    const used = s?.used ?? 0;
    if (s) s.left = s.used = 0;
    return this.primary.call('limiter', 'lease', [{ bucket, rate, burst, cost, credit, per: cost, back, used }]).then((a) => {
      this.take(bucket, rate, burst, cost, a);
      return a.decision;
    });
  }

  /** Asks for the share to be refilled while it still pays for calls: those calls never wait for the answer. */
  private topUp(bucket: string, s: Share, per: number): void {
    s.topping = true;
    const used = s.used;
    s.used = 0;
    this.primary.call('limiter', 'lease', [{ bucket, rate: s.rate, burst: s.burst, cost: 0, per, back: 0, used }]).then(
      (a) => { s.topping = false; this.take(bucket, s.rate, s.burst, per, a); },
      () => { s.topping = false; },
    );
  }

  private take(bucket: string, rate: number, burst: number, per: number, a: LeaseAnswer): void {
    let s = this.shares.get(bucket);
    if (s === undefined || s.rate !== rate || s.burst !== burst) {
      if (a.grant === 0) return;
      const shape = bucketShape(rate, burst);
      s = { rate, burst, cap: shape.cap, perMs: shape.perMs, left: 0, used: 0, rest: 0, low: Math.floor(shareSize(shape.cap, per) / 4), topping: false, active: true };
      this.shares.set(bucket, s);
    }
    s.left += a.grant;
    s.rest = a.rest;
  }

  /** Shares nothing was spent from since the last round go back to their buckets. */
  private giveBackIdle(): void {
    for (const [bucket, s] of this.shares) {
      if (s.active || s.topping) {
        s.active = false;
        continue;
      }
      this.shares.delete(bucket);
      this.giveBack(bucket, s);
    }
  }

  private giveBack(bucket: string, s: Share): void {
    if (s.left + s.used > 0) this.primary.call('limiter', 'giveBack', [{ bucket, back: s.left, used: s.used }]).catch(() => {});
  }
}

/** The decision on a call the share paid for. */
function alone(s: Share): RateDecision {
  const total = Math.min(s.cap, s.left + s.rest);
  return {
    allowed: true,
    limit: Math.floor(s.cap / MICRO),
    remaining: total > 0 ? Math.floor(total / MICRO) : 0,
    resetSeconds: Math.ceil(Math.ceil((s.cap - total) / s.perMs) / 1000),
    retryAfterMs: 0,
    retryAfterSeconds: 0,
  };
}
