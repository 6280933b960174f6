import { GatewayError } from '../errors/gateway-error.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';

/**
 * Limits failed authentications per client IP (docs/decisions.md §7): each failure spends one unit of the IP's bucket, and
 * once it is empty that IP's failures are answered 429 instead, so keys cannot be guessed at speed. Only failures
 * count and only failures are refused: a valid key is never refused because its address is shared with someone
 * guessing (one NAT, one office). Checks that are dear in themselves (a password hash) ask `exhausted` first.
 * Kept in memory on each instance on purpose: no round trip, and an attacker spread over N instances still gets
 * only N times a trickle.
 */
export class UnknownKeyGuard {
  private readonly buckets = new MemoryRateLimiter();

  constructor(private readonly perSecond: number, private readonly burst: number) {}

  /** A failure from `ip`: undefined while it had failures left, else the seconds until it has one again. */
  failed(ip: string): number | undefined {
    const d = this.buckets.consumeSync(ip, 1, this.perSecond, this.burst);
    return d.allowed ? undefined : d.retryAfterSeconds;
  }

  /** Whether `ip` has no failure left (asked before a check that costs much whatever its outcome). */
  exhausted(ip: string): boolean {
    return !this.buckets.wouldAdmit(ip, 1, this.perSecond, this.burst);
  }

  /** The 429 of the JSON-RPC endpoint for an address that has spent its failures. */
  refusal(retryAfter: number): GatewayError {
    return new GatewayError('LIMIT_EXCEEDED', {
      detail: 'too many requests with invalid API keys from this address',
      limit: this.perSecond, window: 'second', retryAfter,
    });
  }
}
