import { Redis } from 'ioredis';
import { gcra, type RateDecision, type RateLimiter } from './rate-limiter.ts';

/**
 * `gcra()` as one Lua script, so that reading and moving a bucket's TAT is atomic across every gateway instance.
 * `now` is Redis `TIME` in whole ms (as `Date.now()`), so the instances share one clock whatever theirs say.
 * Numbers cross as `%.17g` text, which round-trips a double exactly (Lua's own `tostring` keeps 14 digits).
 * The script answers the TAT it read and the `now` it used; `consume` runs the same `gcra()` on them for the
 * decision, so the Redis and memory limiters cannot drift apart. The key expires when its TAT passes (a full
 * bucket needs no key).
 */
const GCRA_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cost, rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local stored = redis.call('GET', KEYS[1])
local tat = now
if stored then tat = tonumber(stored) end
local per = 1000 / rate
local tolerance = math.max(burst, cost) * per
local base = math.max(tat, now)
local nxt = base + cost * per
if nxt - now <= tolerance and nxt > now then
  redis.call('SET', KEYS[1], string.format('%.17g', nxt), 'PX', string.format('%d', math.ceil(nxt - now)))
end
return { string.format('%.17g', tat), string.format('%.17g', now) }
`;

export interface RedisRateLimiterOptions {
  /** `redis://` or `rediss://` URL (config `limits.redisUrl`, REDIS_URL). */
  url: string;
  /** Prepended to every bucket key, so deployments (and test runs) can share one Redis. Default `ng:rl:`. */
  prefix?: string;
  /** A command slower than this fails (and the resilient limiter answers from memory). Default 200 ms. */
  commandTimeoutMs?: number;
  /** Giving up on a connection attempt. Default 1000 ms. */
  connectTimeoutMs?: number;
}

type WithGcra = Redis & { nodegateGcra(key: string, cost: string, rate: string, burst: string): Promise<[string, string]> };

/**
 * Per-second limits shared by several gateway instances through Redis. Fails fast rather than queueing: no
 * offline queue, no per-command retry, a short command timeout; a caller that must keep answering while Redis is
 * away wraps it in `ResilientRateLimiter`. ioredis keeps reconnecting in the background (every 2 s at most).
 */
export class RedisRateLimiter implements RateLimiter {
  readonly prefix: string;
  /** host:port, for logs (never the URL: it may hold a password). */
  readonly where: string;
  private readonly redis: WithGcra;

  constructor(options: RedisRateLimiterOptions) {
    this.prefix = options.prefix ?? 'ng:rl:';
    const url = new URL(options.url);
    this.where = `${url.hostname}:${url.port || 6379}`;
    const redis = new Redis(options.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 200,
      connectTimeout: options.connectTimeoutMs ?? 1000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    // Failures reach callers as rejected commands; without a listener ioredis would print every reconnect attempt.
    redis.on('error', () => {});
    // EVALSHA, falling back to EVAL (which caches it) when the server does not know the script yet.
    redis.defineCommand('nodegateGcra', { numberOfKeys: 1, lua: GCRA_LUA });
    this.redis = redis as WithGcra;
  }

  /** Makes the first connection (rejects when Redis is unreachable; reconnection continues in the background). */
  async connect(): Promise<void> {
    if (this.redis.status === 'wait') await this.redis.connect();
    else await this.ping();
  }

  async consume(bucket: string, cost: number, rate: number, burst: number): Promise<RateDecision> {
    const [tat, now] = await this.redis.nodegateGcra(this.prefix + bucket, String(cost), String(rate), String(burst));
    return gcra(Number(tat), Number(now), cost, rate, burst).decision;
  }

  /** One round trip; rejects while Redis is unreachable. */
  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    // quit() would wait for a reply that an unreachable server never sends.
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => {});
    this.redis.disconnect();
  }
}
