import type { Logger } from 'pino';
import { MemoryRateLimiter } from './rate-limiter/memory-rate-limiter.ts';
import type { RateLimiter } from './rate-limiter/rate-limiter.ts';
import { RedisRateLimiter } from './rate-limiter/redis-rate-limiter.ts';
import { ResilientRateLimiter, type RateLimiterStatus } from './fallback.ts';

/**
 * A limiter that can say where it keeps its buckets (for /readyz): in memory by configuration, in the primary (a
 * worker of `--workers N`), or Redis's status.
 */
export interface OpenedRateLimiter extends RateLimiter {
  status(): 'memory' | 'primary' | RateLimiterStatus;
}

export interface OpenRateLimiterOptions {
  /** `limits.redisUrl` (REDIS_URL); absent: limits are kept in this process's memory. */
  redisUrl?: string;
  /** `limits.redisTimeoutMs`: a slower command counts as Redis being down. */
  timeoutMs?: number;
  /** Key prefix in Redis (default `ng:rl:`). */
  prefix?: string;
  log: Logger;
  /** The clock of the in-process buckets (the hot path's: background/turn-clock.ts). */
  now?: () => number;
}

/**
 * The configured per-second limiter. With a Redis URL, waits for the first connection (at most its connect
 * timeout) so that the first requests do not find Redis "down" while it is still connecting; when that fails the
 * gateway starts anyway, degraded to memory, and switches to Redis once it answers.
 */
export async function openRateLimiter(options: OpenRateLimiterOptions): Promise<OpenedRateLimiter> {
  if (!options.redisUrl) return Object.assign(new MemoryRateLimiter(options.now), { status: () => 'memory' as const });
  const shared = new RedisRateLimiter({ url: options.redisUrl, prefix: options.prefix, commandTimeoutMs: options.timeoutMs });
  const degraded = await shared.connect().then(() => false, () => true);
  return new ResilientRateLimiter({ shared, log: options.log, degraded });
}
