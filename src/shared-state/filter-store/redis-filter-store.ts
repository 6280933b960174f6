import type { Redis } from 'ioredis';
import { closeConnection, commandConnection } from '../redis-connections.ts';
import { MAX_SENT_TRANSACTIONS, type FilterState, type FilterStore } from './filter-store.ts';
import { ADD_LUA, NOTE_LUA, REMOVE_LUA, SINCE_LUA, UPDATE_LUA } from './redis-filter-scripts.ts';

export interface RedisFilterStoreOptions {
  /** `limits.redisUrl` (REDIS_URL). */
  url: string;
  /** Prepended to every key, so that deployments (and test runs) can share one Redis. Default `ng:f:`. */
  prefix?: string;
  /** A command slower than this fails, and the filter call with it (config `limits.redisTimeoutMs`). */
  commandTimeoutMs: number;
  /** Giving up on a connection attempt. Default 1000 ms. */
  connectTimeoutMs?: number;
  /** The clock expiries are judged by (tests move it). */
  now?: () => number;
}

type Scripts = Redis & {
  ngFilterAdd(f: string, byKey: string, byAccount: string, all: string, now: number, max: number, json: string, expiresAt: number, ttl: number, id: string, keyId: string, accountId: string): Promise<number>;
  ngFilterUpdate(f: string, byKey: string, byAccount: string, all: string, now: number, version: number, json: string, expiresAt: number, ttl: number, id: string): Promise<number>;
  ngFilterRemove(f: string, all: string, now: number, id: string, prefix: string, mode: string): Promise<number>;
  ngSentNote(seq: string, list: string, hash: string, max: number, ttl: number): Promise<number>;
  ngSentSince(seq: string, list: string, after: string): Promise<[number, ...string[]]>;
};

/** How long a network's sequence of sent transactions is kept after its last transaction (pending filters follow it). */
const SENT_TTL_MS = 24 * 3600_000;
/** How often the count of live filters (for /metrics) is read. */
const SIZE_EVERY_MS = 15_000;

/**
 * Filters in Redis, shared by every instance of a cluster: made on one instance, polled on any, kept
 * across restarts. A filter is a hash `{prefix}f:{id}` of its state as JSON (`s`), a version (`v`), its expiry (`e`),
 * key and account; the key expires with the filter (its TTL is the filter's time left plus a grace, set again by each save).
 * Per key and per account a sorted set of filter ids scored by expiry counts live filters; adding one is a Lua
 * script (expired members dropped, both counts checked, the filter written) so two instances cannot both pass the
 * plan's cap. A save is a compare-and-set on the version, and never writes a filter that is gone. What one filter
 * holds is bounded by the Filters' own bounds (filters.maxKeptBytes of logs, 1,000 pending hashes, 128 blocks).
 *
 * Every command has a time-out and none waits for a connection (no offline queue): a call rejects as soon as Redis
 * fails (the shared state's fallback then answers FILTERS_UNAVAILABLE). Expiry is judged by the instance's clock
 * against `expiresAt` (Redis's TTL only frees the memory), as the memory store does.
 */
export class RedisFilterStore implements FilterStore {
  private readonly redis: Scripts;
  private readonly prefix: string;
  private readonly now: () => number;
  private live = 0;
  private readonly counter: NodeJS.Timeout;

  constructor(options: RedisFilterStoreOptions) {
    this.prefix = options.prefix ?? 'ng:f:';
    this.now = options.now ?? Date.now;
    const redis = commandConnection(options.url, { commandTimeoutMs: options.commandTimeoutMs, connectTimeoutMs: options.connectTimeoutMs });
    redis.defineCommand('ngFilterAdd', { numberOfKeys: 4, lua: ADD_LUA });
    redis.defineCommand('ngFilterUpdate', { numberOfKeys: 4, lua: UPDATE_LUA });
    redis.defineCommand('ngFilterRemove', { numberOfKeys: 2, lua: REMOVE_LUA });
    redis.defineCommand('ngSentNote', { numberOfKeys: 2, lua: NOTE_LUA });
    redis.defineCommand('ngSentSince', { numberOfKeys: 2, lua: SINCE_LUA });
    this.redis = redis as Scripts;
    this.counter = setInterval(() => void this.count().catch(() => {}), SIZE_EVERY_MS);
    this.counter.unref();
  }

  /** Makes the first connection (rejects when Redis is unreachable; reconnection continues in the background). */
  async connect(): Promise<void> {
    if (this.redis.status === 'wait') await this.redis.connect();
    else await this.ping();
  }

  /** One round trip; rejects while Redis is unreachable. */
  async ping(): Promise<void> {
    await this.redis.ping();
  }

  get size(): number {
    return this.live;
  }

  async add(filter: FilterState, max: number): Promise<boolean> {
    const now = this.now();
    const { version: _, ...state } = filter;
    const done = await this.redis.ngFilterAdd(
      this.key(filter.id), this.byKey(filter.keyId), this.byAccount(filter.accountId), this.prefix + 'all',
      now, max, JSON.stringify(state), filter.expiresAt, ttl(filter.expiresAt, now), filter.id, filter.keyId, filter.accountId,
    );
    return done === 1;
  }

  async get(id: string): Promise<FilterState | undefined> {
    const [s, v, e] = await this.redis.hmget(this.key(id), 's', 'v', 'e');
    if (s === null) return undefined;
    const now = this.now();
    if (Number(e) <= now) {
      // Dropped when met expired, as the memory store does: a copy read before cannot save it again.
      await this.redis.ngFilterRemove(this.key(id), this.prefix + 'all', now, id, this.prefix, 'expired');
      return undefined;
    }
    return { ...(JSON.parse(s) as FilterState), version: Number(v) };
  }

  async update(filter: FilterState): Promise<boolean> {
    const now = this.now();
    const { version, ...state } = filter;
    const done = await this.redis.ngFilterUpdate(
      this.key(filter.id), this.byKey(filter.keyId), this.byAccount(filter.accountId), this.prefix + 'all',
      now, version ?? -1, JSON.stringify(state), filter.expiresAt, ttl(filter.expiresAt, now), filter.id,
    );
    return done === 1;
  }

  async remove(id: string): Promise<boolean> {
    return (await this.redis.ngFilterRemove(this.key(id), this.prefix + 'all', this.now(), id, this.prefix, '')) === 1;
  }

  async noteSent(network: string, hash: string): Promise<void> {
    await this.redis.ngSentNote(this.prefix + `seq:${network}`, this.prefix + `sent:${network}`, hash, MAX_SENT_TRANSACTIONS, SENT_TTL_MS);
  }

  async sentSince(network: string, after?: number): Promise<{ seq: number; hashes: string[] }> {
    const [seq, ...hashes] = await this.redis.ngSentSince(this.prefix + `seq:${network}`, this.prefix + `sent:${network}`, after === undefined ? '' : String(after));
    return { seq: Number(seq), hashes };
  }

  async close(): Promise<void> {
    clearInterval(this.counter);
    await closeConnection(this.redis);
  }

  private key(id: string): string {
    return `${this.prefix}f:${id}`;
  }

  private byKey(keyId: string): string {
    return `${this.prefix}k:${keyId}`;
  }

  private byAccount(accountId: string): string {
    return `${this.prefix}a:${accountId}`;
  }

  /** Counts the live filters of every instance now (`size` is the last count; expired members are dropped first). */
  async count(): Promise<number> {
    const all = this.prefix + 'all';
    const replies = await this.redis.multi().zremrangebyscore(all, '-inf', this.now()).zcard(all).exec();
    const n = Number(replies?.[1]?.[1] ?? 0);
    this.live = n;
    return n;
  }
}

/**
 * How long a filter's Redis keys outlive its expiry: a poll that waited for the node past the filter's idle time
 * still saves it (as the memory store lets it), and instances' clocks may differ by a little.
 */
const GRACE_MS = 60_000;

/** The Redis key's time to live: the filter's time left, and the grace. */
function ttl(expiresAt: number, now: number): number {
  return Math.max(1, Math.ceil(expiresAt - now)) + GRACE_MS;
}
