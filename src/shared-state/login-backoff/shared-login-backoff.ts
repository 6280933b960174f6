import type { Logger } from 'pino';
import { LoginBackoff, type BackoffOptions, type LoginBackoffStore } from './login-backoff.ts';
import { RedisLoginBackoff } from './redis-login-backoff.ts';

/** Where the shared login back-off is kept: Redis (instances) or the primary (workers of one machine). */
export type LoginBackoffShare = Pick<RedisLoginBackoff, keyof LoginBackoffStore | 'ping' | 'where'>;

/**
 * The login backoff in cluster mode: Redis is the shared truth (an email guessed through three instances
 * backs off as through one), this instance's memory the fallback, and the longer of the two waits holds.
 * Failures and successes are written to both, and awaited: the next try may reach another instance at once. While
 * Redis fails or times out, memory alone decides, as on one instance, with one warning per outage; at most every
 * `recheckMs` a ping, off the login's path, finds out whether it is back.
 */
export class SharedLoginBackoff implements LoginBackoffStore {
  private up: boolean;
  private nextCheck = 0;
  private checking = false;

  constructor(
    private readonly local: LoginBackoff,
    private readonly redis: LoginBackoffShare,
    private readonly log: Logger,
    private readonly opts: { degraded?: boolean; recheckMs?: number; now?: () => number } = {},
  ) {
    this.up = true;
    if (opts.degraded) this.down(new Error('not reachable at start'));
  }

  waitSeconds(email: string, address: string, now: number): number | Promise<number> {
    const local = this.local.waitSeconds(email, address, now);
    if (!this.shared()) return local;
    // Asked even when memory already says wait: Redis may know a longer one (failures made elsewhere), and a
    // login is dear enough that a round trip before it costs nothing to speak of.
    return this.redis.waitSeconds(email, address, now).then((shared) => Math.max(local, shared), (err: unknown) => {
      this.down(err);
      return local;
    });
  }

  failed(email: string, address: string, now: number): void | Promise<void> {
    this.local.failed(email, address, now);
    if (this.shared()) return this.redis.failed(email, address, now).catch((err: unknown) => this.down(err));
  }

  succeeded(email: string, address: string): void | Promise<void> {
    this.local.succeeded(email, address);
    if (this.shared()) return this.redis.succeeded(email, address).catch((err: unknown) => this.down(err));
  }

  /** Whether `address` has not failed lately here, or logged in to `email` before: its checks go first (local slots). */
  trusted(email: string, address: string, now: number): boolean {
    return this.local.trusted(email, address, now);
  }

  /** Whether Redis is answering; while not, starts the (rate-limited, background) check for its return. */
  shared(): boolean {
    if (this.up) return true;
    const now = (this.opts.now ?? Date.now)();
    if (!this.checking && now >= this.nextCheck) {
      this.checking = true;
      this.redis.ping().then(() => {
        if (this.up) return;
        this.up = true;
        this.log.info({ redis: this.redis.where }, 'Redis answers again: the login backoff is shared again');
      }, () => {}).finally(() => {
        this.checking = false;
        this.nextCheck = (this.opts.now ?? Date.now)() + (this.opts.recheckMs ?? 3000);
      });
    }
    return false;
  }

  private down(err: unknown): void {
    if (!this.up) return; // logins failing together: one warning
    this.up = false;
    this.nextCheck = (this.opts.now ?? Date.now)() + (this.opts.recheckMs ?? 3000);
    this.log.warn({ err: (err as Error).message, redis: this.redis.where }, 'Redis unreachable: the login backoff is kept in memory, per instance, until it answers again');
  }
}

/**
 * The login backoff as configured: with `limits.redisUrl` (cluster mode) kept in Redis too, waiting for the first
 * connection at most its connect time-out (the gateway starts anyway, memory alone until Redis answers); without,
 * this instance's memory. `close` ends the Redis connection.
 */
export async function openLoginBackoff(o: { options: BackoffOptions; shared?: LoginBackoffShare; redisUrl?: string; timeoutMs: number; log: Logger }): Promise<{ backoff: LoginBackoffStore & Pick<LoginBackoff, 'trusted'>; close(): Promise<void> }> {
  const local = new LoginBackoff(o.options);
  // A worker of `--workers N`: the primary is the shared truth, as Redis is for instances.
  if (o.shared) return { backoff: new SharedLoginBackoff(local, o.shared, o.log), close: async () => {} };
  if (!o.redisUrl) return { backoff: local, close: async () => {} };
  const redis = new RedisLoginBackoff({ ...o.options, url: o.redisUrl, commandTimeoutMs: o.timeoutMs });
  const degraded = await redis.connect().then(() => false, () => true);
  return { backoff: new SharedLoginBackoff(local, redis, o.log, { degraded }), close: () => redis.close() };
}
