import type { Config } from '../config/schema.ts';
import type { KeyContext } from '../store/keys/api-key.ts';
import { decisionOf, LimitRefusal } from './limit-refusal.ts';
import { secondsToNextMonth, type QuotaHolder, type QuotaTracker } from './quota.ts';
import type { BucketHolder, RateDecision, RateLimiter } from '../shared-state/rate-limiter/rate-limiter.ts';

/**
 * A key as the limits read it: its records, and where its account's quota record and bucket name are held between
 * its requests (the key's resolution holds them: auth/key-resolver.ts).
 */
export interface LimitedKey extends KeyContext, QuotaHolder, BucketHolder {
  /** Its account's id (`account.id`), read on the key itself. */
  accountId: string;
  bucketName: string | undefined;
}

/**
 * The `limit` stage (docs/decisions.md §7): a request's compute units against the account's per-second bucket (its keys
 * together) and its monthly quota, both from the plan. Called once per HTTP request with the sum of its admitted
 * items, so a batch is admitted or refused as a whole. Nothing is spent for a refused request.
 */
export class Limits {
  private readonly burstSeconds: number;
  /**
   * Each account's bucket name, made once per account object: a name concatenated per request was hashed afresh by
   * the bucket map at every lookup, twice a request. Weak: it goes with the account object.
   */
  private readonly buckets = new WeakMap<KeyContext['account'], string>();

  constructor(config: Readonly<Config>, private readonly rate: RateLimiter, private readonly quota: QuotaTracker) {
    this.burstSeconds = config.limits.burstSeconds;
  }

  /** Writes this instance's compute units not yet in the store (the quota a report shows is then exact for it). */
  flushUsage(): Promise<void> {
    return this.quota.flush();
  }

  /**
   * Stage limit at admission, before the body is read: spends `units` (limits.invalidCost plus the
   * body's size units), or throws 429. A key whose bucket cannot pay for reading its body never has it read.
   * A bucket in debt (after a call dearer than the bucket) says to come back when it is full again: the refused
   * body is unknown, and that is when any call passes.
   */
  admitBody(k: LimitedKey, units: number): RateDecision | Promise<RateDecision> {
    try {
      const d = this.admit(k, units);
      return d instanceof Promise ? d.catch((err) => this.refusedBody(k, units, err)) : d;
    } catch (err) {
      return this.refusedBody(k, units, err);
    }
  }

  private refusedBody(k: LimitedKey, units: number, err: unknown): never {
    const d = decisionOf(err);
    // Longer to wait than earning `units` from empty takes: the bucket is below zero.
    const inDebt = d !== undefined && d.retryAfterMs > Math.ceil((units * 1000) / k.plan.cuPerSecond);
    if (inDebt && d.resetSeconds > d.retryAfterSeconds) {
      (err as LimitRefusal).data.retryAfter = d.resetSeconds;
      d.retryAfterSeconds = d.resetSeconds;
    }
    throw err;
  }

  /**
   * Admits `cost` units for the key, or refuses with 429 (-32005) with `data: {limit, window, retryAfter}`. `credit`:
   * the units `admitBody` already took for this request (part of `cost`; kept when refused: they paid for the read).
   * With the account's usage known and an in-process limiter, decided at once: the decision is returned, or the
   * refusal thrown (every request passes here twice, and a promise per step cost ~14 promises a request). Otherwise
   * a promise of the same.
   */
  admit(k: LimitedKey, cost: number, credit = 0): RateDecision | Promise<RateDecision> {
    if (cost > credit) {
      const used = this.quota.usedBy(k.accountId, k);
      if (used instanceof Promise) return used.then((u) => this.withinQuota(k, u, cost, credit));
      return this.withinQuota(k, used, cost, credit);
    }
    return this.spend1s(k, cost, credit);
  }

  private withinQuota(k: LimitedKey, used: number, cost: number, credit: number): RateDecision | Promise<RateDecision> {
    const plan = k.plan;
    if (used + cost - credit > plan.cuPerMonth) {
      const retryAfter = secondsToNextMonth(Date.now());
      throw new LimitRefusal({
        detail: `the monthly quota of ${plan.cuPerMonth} compute units of the ${plan.name} plan is spent`,
        limit: plan.cuPerMonth, window: 'month', retryAfter,
      });
    }
    return this.spend1s(k, cost, credit);
  }

  /**
   * One bucket per account, not per key: keys are free to make, so five keys must not be five times the plan's
   * rate. Each key is held to it too (a key's spending is part of its account's).
   */
  private spend1s(k: LimitedKey, cost: number, credit: number): RateDecision | Promise<RateDecision> {
    const plan = k.plan;
    const d = this.rate.consume(k.bucketName ?? this.bucketOf(k), cost, plan.cuPerSecond, plan.cuPerSecond * this.burstSeconds, credit, k);
    return d instanceof Promise ? d.then((x) => this.spent(k, cost, credit, x)) : this.spent(k, cost, credit, d);
  }

  /** The key's account's bucket name, then held by the key (one string per account object, its hash made once). */
  private bucketOf(k: LimitedKey): string {
    let name = this.buckets.get(k.account);
    if (name === undefined) this.buckets.set(k.account, (name = `a:${k.account.id}`));
    k.bucketName = name;
    return name;
  }

  private spent(k: LimitedKey, cost: number, credit: number, d: RateDecision): RateDecision {
    const plan = k.plan;
    // A request whose items were all refused costs nothing and is never refused for its cost (0).
    if (!d.allowed && cost > 0) {
      throw new LimitRefusal({
        detail: `${plan.cuPerSecond} compute units per second`,
        limit: plan.cuPerSecond, window: 'second', retryAfter: d.retryAfterSeconds,
      }, d);
    }
    this.quota.add(k.accountId, cost - credit, k, plan);
    return d;
  }

  /**
   * A notification about to be delivered to the key's socket, charged to the account's monthly quota as a call is:
   * true and counted when it fits what is left of the month (on the plan the key holds now), false and nothing
   * counted when the month is spent (the transport then ends the account's subscriptions on that socket). The
   * per-second bucket is not charged: the event exists already, and a bucket would refuse a burst of them rather
   * than pace it. An account's first usage read still under way lets the notification through (it is counted).
   */
  spend(k: LimitedKey, units: number): boolean {
    if (units <= 0) return true;
    const used = this.quota.usedBy(k.accountId, k);
    if (typeof used === 'number' && used + units > k.plan.cuPerMonth) return false;
    this.quota.add(k.accountId, units, k, k.plan);
    return true;
  }

  /**
   * Gives back `units` of work the gateway refused after the limit stage had admitted it (a filter over the plan's
   * count): a refused request costs no more than an invalid one. Best effort, off the answer's path.
   */
  refund(k: LimitedKey, units: number): void {
    if (units <= 0) return;
    const plan = k.plan;
    const d = this.rate.consume(k.bucketName ?? this.bucketOf(k), -units, plan.cuPerSecond, plan.cuPerSecond * this.burstSeconds, 0, k);
    if (d instanceof Promise) d.catch(() => {});
    this.quota.add(k.accountId, -units, k, plan);
  }
}
