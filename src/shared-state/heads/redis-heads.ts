import type { Redis } from 'ioredis';
import { closeConnection, commandConnection, subscriberConnection } from '../redis-connections.ts';
import type { Leases } from '../leases/leases.ts';
import { checksLease, headKey, type HeadsHub, type NodesReport, type SharedHead } from './heads-hub.ts';
import { TurnReads } from './turn-reads.ts';

/**
 * Keeps the higher of the stored head and ARGV[1] (or sets it, ARGV[2] = 'down'), and says so to the others on
 * ARGV[3], the channel.
 */
const PUBLISH_LUA = `
local cur = tonumber(redis.call('GET', KEYS[1]) or '-1')
local n = tonumber(ARGV[1])
if n > cur or (ARGV[2] == 'down' and n < cur) then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', 604800)
  redis.call('PUBLISH', ARGV[3], KEYS[1] .. ' ' .. ARGV[1])
  return 1
end
return 0
`;

type WithPublish = Redis & { nodegateHead(key: string, n: string, mode: string, channel: string): Promise<number> };

export interface RedisHeadsOptions {
  url: string;
  /** A command slower than this fails (config `limits.redisTimeoutMs`). */
  timeoutMs: number;
  /** Who checks each network's nodes (its lease, `checks:{key}`). */
  leases: Leases;
  /** Prepended to every key and to the channel. Default `ng:`. */
  prefix?: string;
}

/**
 * The shared heads of every network of this instance in Redis, over two connections (commands, and the
 * subscription that tells this instance of every higher head another one publishes). A command that fails rejects
 * (the shared state's fallback then answers from this instance's own head).
 */
export class RedisHeads implements HeadsHub {
  readonly embeddedToo = false;
  private readonly redis: WithPublish;
  private readonly sub: Redis;
  private readonly prefix: string;
  private readonly channel: string;
  private readonly leases: Leases;
  private readonly followers = new Map<string, (n: number) => void>();
  /** The MGET of the calls that arrive in one turn of the event loop. */
  private readonly reads = new TurnReads((keys) => this.redis.mget(keys));

  constructor(o: RedisHeadsOptions) {
    this.prefix = o.prefix ?? 'ng:';
    this.channel = `${this.prefix}head`;
    this.leases = o.leases;
    const redis = commandConnection(o.url, { commandTimeoutMs: o.timeoutMs });
    redis.defineCommand('nodegateHead', { numberOfKeys: 1, lua: PUBLISH_LUA });
    this.redis = redis as WithPublish;
    this.sub = subscriberConnection(o.url);
    this.sub.on('message', (_channel: string, message: string) => {
      const space = message.lastIndexOf(' ');
      const follow = this.followers.get(message.slice(0, space));
      const n = Number(message.slice(space + 1));
      if (follow && Number.isSafeInteger(n)) follow(n);
    });
  }

  /** Connects both (rejects when Redis is unreachable: the instance starts anyway, on its own head, and reconnects). */
  async connect(): Promise<void> {
    try {
      await Promise.all([this.redis.connect(), this.sub.connect()]);
    } catch (err) {
      // Asked for anyway: the subscriber sends it once it connects, so that this instance follows the others then.
      void this.sub.subscribe(this.channel).catch(() => {});
      throw err;
    }
    await this.sub.subscribe(this.channel);
  }

  /**
   * The shared head of a network, named by what it is (headKey). `follow` is told of every higher head another
   * instance publishes.
   */
  network(chainId: number, upstreams: readonly string[], follow: (n: number) => void): SharedHead {
    const id = headKey(chainId, upstreams);
    const key = `${this.prefix}head:${id}`;
    this.followers.set(key, follow);
    return {
      publish: (n) => this.write(key, n, 'up'),
      lower: (n) => this.write(key, n, 'down'),
      read: () => this.reads.read(key),
      leads: async (ttlMs) => this.leases.take(checksLease(id), ttlMs),
      report: async (report, ttlMs) => void await this.redis.set(`${this.prefix}nodes:${id}`, JSON.stringify(report), 'PX', ttlMs),
      lastReport: async () => {
        const v = await this.redis.get(`${this.prefix}nodes:${id}`);
        return v === null ? undefined : (JSON.parse(v) as NodesReport);
      },
    };
  }

  private async write(key: string, n: number, mode: 'up' | 'down'): Promise<void> {
    await this.redis.nodegateHead(key, String(n), mode, this.channel);
  }

  /** One round trip; rejects while Redis is unreachable. */
  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    for (const r of [this.redis, this.sub]) await closeConnection(r);
  }
}
