import type { Redis } from 'ioredis';
import { closeConnection, commandConnection } from '../redis-connections.ts';
import { bucketShape, MICRO, tokenBucket, type RateDecision, type RateLimiter } from './rate-limiter.ts';

/**
 * `tokenBucket()` as one Lua script, so that reading and moving a bucket is atomic across every gateway instance.
 * `now` is Redis `TIME` in whole ms (as `Date.now()`), so the instances share one clock whatever theirs say. The
 * bucket is `level at` (micro-units, ms): integers below 2^53, which Lua's doubles hold exactly and `%.17g` writes
 * in full (Lua's own `tostring` keeps 14 digits). The script answers the state it read and the `now` it used;
 * `consume` runs the same `tokenBucket()` on them for the decision, so the Redis and memory limiters cannot drift
 * apart. The key expires when the bucket is full again (a full bucket needs no key).
 */
const BUCKET_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local want, cap, perMs, credit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4] or '0')
local stored = redis.call('GET', KEYS[1])
local level, at = cap, now
if stored then
  local sp = string.find(stored, ' ')
  level, at = tonumber(string.sub(stored, 1, sp - 1)), tonumber(string.sub(stored, sp + 1))
end
local cur = level
local dt = now - at
if dt > 0 then
  local missing = cap - level
  if missing <= 0 or dt >= math.ceil(missing / perMs) then cur = cap else cur = level + dt * perMs end
end
local judged = cur
if credit > 0 then judged = math.min(cap, cur + credit) end
if want < 0 or ((want > 0 or credit > 0) and (want <= judged or judged == cap)) then
  local after = math.min(cap, judged - want)
  redis.call('SET', KEYS[1], string.format('%.17g %.17g', after, now), 'PX', string.format('%d', math.max(1, math.ceil((cap - after) / perMs))))
end
if stored then return { string.format('%.17g', level), string.format('%.17g', at), string.format('%.17g', now) } end
return { '', '', string.format('%.17g', now) }
`;

export interface RedisRateLimiterOptions {
  /** `redis://` or `rediss://` URL (config `limits.redisUrl`, REDIS_URL). */
  url: string;
  /** Prepended to every bucket key, so deployments (and test runs) can share one Redis. Default `ng:rl:`. */
  prefix?: string;
  /** A command slower than this fails (and the shared state's fallback answers from memory). Default 200 ms. */
  commandTimeoutMs?: number;
  /** Giving up on a connection attempt. Default 1000 ms. */
  connectTimeoutMs?: number;
}

type WithBucket = Redis & { nodegateBucket(key: string, want: string, cap: string, perMs: string, credit: string): Promise<[string, string, string]> };

/**
 * Per-second limits shared by several gateway instances through Redis. Fails fast rather than queueing: no
 * offline queue, no per-command retry, a short command timeout; a caller that must keep answering while Redis is
 * away gets it through the shared state's fallback (fallback.ts). ioredis keeps reconnecting in the background (every 2 s at most).
 */
export class RedisRateLimiter implements RateLimiter {
  readonly prefix: string;
  private readonly redis: WithBucket;

  constructor(options: RedisRateLimiterOptions) {
    this.prefix = options.prefix ?? 'ng:rl:';
    const redis = commandConnection(options.url, { commandTimeoutMs: options.commandTimeoutMs ?? 200, connectTimeoutMs: options.connectTimeoutMs });
    // EVALSHA, falling back to EVAL (which caches it) when the server does not know the script yet.
    redis.defineCommand('nodegateBucket', { numberOfKeys: 1, lua: BUCKET_LUA });
    this.redis = redis as WithBucket;
  }

  /** Makes the first connection (rejects when Redis is unreachable; reconnection continues in the background). */
  async connect(): Promise<void> {
    if (this.redis.status === 'wait') await this.redis.connect();
    else await this.ping();
  }

  async consume(bucket: string, cost: number, rate: number, burst: number, credit = 0): Promise<RateDecision> {
    const { cap, perMs } = bucketShape(rate, burst);
    const [level, at, now] = await this.redis.nodegateBucket(this.prefix + bucket, String(cost * MICRO), String(cap), String(perMs), String(credit * MICRO));
    const stored = level === '' ? undefined : { level: Number(level), at: Number(at) };
    return tokenBucket(stored, Number(now), cost, rate, burst, credit).decision;
  }

  /** One round trip; rejects while Redis is unreachable. */
  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await closeConnection(this.redis);
  }
}
