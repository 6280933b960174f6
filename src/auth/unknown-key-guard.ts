import { GatewayError } from '../errors/gateway-error.ts';
import { MemoryRateLimiter } from '../limits/memory-rate-limiter.ts';

/**
 * Limits failed authentications per client IP (DECISIONS 7): each 401 spends one unit of the IP's bucket, and
 * an IP whose bucket is empty gets 429 before its key is even looked up, so keys cannot be guessed at speed.
 * Kept in memory on each instance on purpose: it needs no round trip on the hot path, and an attacker spread
 * over N instances still gets only N times a trickle. Callers with valid keys never touch it.
 */
export class UnknownKeyGuard {
  private readonly buckets = new MemoryRateLimiter();

  constructor(private readonly perSecond: number, private readonly burst: number) {}

  /** Throws 429 when this IP has used up its failures. */
  check(ip: string): void {
    if (this.buckets.wouldAdmit(ip, 1, this.perSecond, this.burst)) return;
    throw new GatewayError('LIMIT_EXCEEDED', {
      detail: 'too many requests with invalid API keys from this address',
      limit: this.perSecond, window: 'second', retryAfter: Math.ceil(1 / this.perSecond),
    });
  }

  failed(ip: string): void {
    this.buckets.consumeSync(ip, 1, this.perSecond, this.burst);
  }
}
