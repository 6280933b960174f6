import type { Logger } from 'pino';
import { MemoryRateLimiter } from './rate-limiter/memory-rate-limiter.ts';
import type { RateDecision, RateLimiter } from './rate-limiter/rate-limiter.ts';

/** Where per-second limits are being kept: shared in Redis, or per instance in memory while Redis is away. */
export type RateLimiterStatus = 'redis' | 'degraded';

/** What the resilient limiter needs of its shared limiter (RedisRateLimiter; a fake in tests). */
export interface SharedRateLimiter extends RateLimiter {
  /** Always a promise: it asks another process. */
  consume(bucket: string, cost: number, ratePerSecond: number, burst: number, credit?: number): Promise<RateDecision>;
  ping(): Promise<void>;
  readonly where?: string;
}

export interface ResilientRateLimiterOptions {
  shared: SharedRateLimiter;
  log: Logger;
  /** Answers while the shared limiter is away. Default: a new MemoryRateLimiter. */
  fallback?: RateLimiter;
  /** While degraded, how often at most to ask the shared limiter whether it is back. Default 3000 ms. */
  recheckMs?: number;
  /** Start degraded (the first connection failed), without a request having to find out. */
  degraded?: boolean;
  now?: () => number;
}

/**
 * Redis must not be a single point of failure of the gateway: when it errors or times out, requests are limited
 * by the local memory limiter instead (each instance then admits up to the plan's rate by itself), with one
 * warning per outage. While degraded no request waits on Redis: at most every `recheckMs` a ping, off the
 * request path, finds out whether it is back; the next requests then go to Redis again.
 */
export class ResilientRateLimiter implements RateLimiter {
  private readonly shared: SharedRateLimiter;
  private readonly fallback: RateLimiter;
  private readonly log: Logger;
  private readonly recheckMs: number;
  private readonly now: () => number;
  private state: RateLimiterStatus = 'redis';
  private downSince = 0;
  private nextCheck = 0;
  private checking = false;

  constructor(options: ResilientRateLimiterOptions) {
    this.shared = options.shared;
    this.fallback = options.fallback ?? new MemoryRateLimiter();
    this.log = options.log;
    this.recheckMs = options.recheckMs ?? 3000;
    this.now = options.now ?? Date.now;
    if (options.degraded) this.degrade(new Error(`Redis not reachable at ${this.shared.where ?? 'its address'}`));
  }

  /** For /readyz and logs. While degraded, also triggers the (rate-limited, background) check for recovery. */
  status(): RateLimiterStatus {
    if (this.state === 'degraded') this.recheck();
    return this.state;
  }

  /** Redis's decision; while Redis is unreachable, the memory limiter's, at once. */
  consume(bucket: string, cost: number, rate: number, burst: number, credit = 0): RateDecision | Promise<RateDecision> {
    if (this.state === 'redis') {
      return this.shared.consume(bucket, cost, rate, burst, credit).catch((err: unknown) => {
        this.degrade(err);
        return this.fallback.consume(bucket, cost, rate, burst, credit);
      });
    }
    this.recheck();
    return this.fallback.consume(bucket, cost, rate, burst, credit);
  }

  private degrade(err: unknown): void {
    if (this.state === 'degraded') return; // requests failing together: one warning
    this.state = 'degraded';
    this.downSince = this.now();
    this.nextCheck = this.downSince + this.recheckMs;
    this.log.warn(
      { err: (err as Error).message, redis: this.shared.where },
      'Redis unreachable: per-second limits and failure guards are kept in memory, per instance, until it answers again',
    );
  }

  private recheck(): void {
    if (this.checking || this.now() < this.nextCheck) return;
    this.checking = true;
    this.shared.ping().then(
      () => {
        if (this.state !== 'degraded') return;
        this.state = 'redis';
        this.log.info({ redis: this.shared.where, downSeconds: Math.round((this.now() - this.downSince) / 1000) }, 'Redis answers again: per-second limits and failure guards are shared again');
      },
      () => {},
    ).finally(() => {
      this.checking = false;
      this.nextCheck = this.now() + this.recheckMs;
    });
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.fallback.close()]);
  }
}
