import type { SharedStateClient } from '../protocol.ts';
import type { RateDecision, RateLimiter } from './rate-limiter.ts';

/**
 * The per-second limits of a worker of `--workers N`, decided by its primary (in its memory limiter): one bucket per
 * account however many workers serve it. A primary that does not answer in time fails the call (the shared state's
 * fallback then decides in this worker's memory).
 */
export class RemoteRateLimiter implements RateLimiter {
  constructor(private readonly primary: SharedStateClient) {}

  consume(bucket: string, cost: number, ratePerSecond: number, burst: number, credit?: number): Promise<RateDecision> {
    return this.primary.call('limiter', 'consume', [bucket, cost, ratePerSecond, burst, credit]);
  }

  async close(): Promise<void> {}
}
