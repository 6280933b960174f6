import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { closeConnection, commandConnection } from '../redis-connections.ts';
import { backoffWait, type BackoffOptions, type LoginBackoffStore, type Streak } from './login-backoff.ts';

/**
 * Bumps the streaks of one failure (KEYS: the email's, the email-and-address pair's, the address's last failure),
 * atomically across instances: a streak older than `cleanAfterMs` starts again, as in memory (MemoryLoginBackoff). Each
 * key expires once it can no longer hold anything back. Times are the instances' own clocks (ARGV[1]), as a streak
 * in memory uses them; `%.17g` writes ms in full (Lua's tostring keeps 14 digits).
 */
const FAILED_LUA = `
local now, clean, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
for i = 1, 2 do
  local s = redis.call('GET', KEYS[i])
  local count = 0
  if s then
    local sp = string.find(s, ' ')
    if now - tonumber(string.sub(s, sp + 1)) < clean then count = tonumber(string.sub(s, 1, sp - 1)) end
  end
  redis.call('SET', KEYS[i], string.format('%.17g %.17g', count + 1, now), 'PX', ttl)
end
redis.call('SET', KEYS[3], string.format('%.17g', now), 'PX', ttl)
`;

/** How long an address that logged in to an email stays known for it (its checks go first, the email's wait spares it). */
const KNOWN_GOOD_MS = 30 * 24 * 3_600_000;

export interface RedisLoginBackoffOptions extends BackoffOptions {
  url: string;
  /** Prepended to every key. Default `ng:lb:`. */
  prefix?: string;
  /** A slower command fails (the shared back-off then keeps to memory). */
  commandTimeoutMs: number;
}

type WithFailed = Redis & { nodegateLoginFailed(email: string, pair: string, dirty: string, now: string, clean: string, ttl: string): Promise<null> };

/**
 * The login backoff kept in Redis, so that an email's streak and an address's failures hold on every
 * instance. Keys name a SHA-256 of the email and address, never the email itself. Fails fast (no offline queue, no
 * retry, a command time-out); the shared state's fallback decides what to do then.
 */
export class RedisLoginBackoff implements LoginBackoffStore {
  private readonly redis: WithFailed;
  private readonly prefix: string;
  private readonly ttl: string;

  constructor(private readonly o: RedisLoginBackoffOptions) {
    this.prefix = o.prefix ?? 'ng:lb:';
    this.ttl = String(Math.max(o.cleanAfterMs, o.maxBackoffMs));
    const redis = commandConnection(o.url, { commandTimeoutMs: o.commandTimeoutMs });
    redis.defineCommand('nodegateLoginFailed', { numberOfKeys: 3, lua: FAILED_LUA });
    this.redis = redis as WithFailed;
  }

  /** The first connection (rejects when Redis is unreachable; reconnection continues in the background). */
  async connect(): Promise<void> {
    if (this.redis.status === 'wait') await this.redis.connect();
    else await this.ping();
  }

  async waitSeconds(email: string, address: string, now: number): Promise<number> {
    const [pair, mail, dirty, good] = await this.redis.mget(this.key('p', email, address), this.key('e', email), this.key('d', address), this.key('g', email, address));
    return backoffWait({ pair: streak(pair), email: streak(mail), dirtyAt: dirty === null ? undefined : Number(dirty), knownGood: good !== null }, now, this.o);
  }

  async failed(email: string, address: string, now: number): Promise<void> {
    await this.redis.nodegateLoginFailed(this.key('e', email), this.key('p', email, address), this.key('d', address), String(now), String(this.o.cleanAfterMs), this.ttl);
  }

  async succeeded(email: string, address: string): Promise<void> {
    await this.redis.multi().del(this.key('p', email, address)).set(this.key('g', email, address), '1', 'PX', KNOWN_GOOD_MS).exec();
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await closeConnection(this.redis);
  }

  private key(kind: string, ...parts: string[]): string {
    return `${this.prefix}${kind}:${createHash('sha256').update(parts.join('\0')).digest('base64url').slice(0, 22)}`;
  }
}

function streak(v: string | null): Streak | undefined {
  if (v === null) return undefined;
  const sp = v.indexOf(' ');
  return { count: Number(v.slice(0, sp)), last: Number(v.slice(sp + 1)) };
}
