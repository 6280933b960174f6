import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { closeConnection, commandConnection } from '../redis-connections.ts';
import type { Leases } from './leases.ts';

/**
 * Takes the lease (SET NX PX: a key that is there is another's, or this instance's own) or keeps it (the holder's
 * own key: its time starts again). ARGV[1] the holder, ARGV[2] the time to live (ms).
 */
const TAKE_LUA = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0
`;

export interface RedisLeasesOptions {
  url: string;
  /** Prepended to every lease's name. Default `ng:`. */
  prefix?: string;
  /** A slower command fails (config `limits.redisTimeoutMs`). */
  commandTimeoutMs: number;
}

type WithTake = Redis & { nodegateLease(key: string, holder: string, ttlMs: string): Promise<number> };

/** Leases held across instances in Redis: a key per lease, holding its holder, that expires with the lease. */
export class RedisLeases implements Leases {
  private readonly redis: WithTake;
  private readonly prefix: string;
  /** This instance, as the holder of a lease. */
  private readonly self = randomBytes(8).toString('hex');

  constructor(o: RedisLeasesOptions) {
    this.prefix = o.prefix ?? 'ng:';
    const redis = commandConnection(o.url, { commandTimeoutMs: o.commandTimeoutMs });
    redis.defineCommand('nodegateLease', { numberOfKeys: 1, lua: TAKE_LUA });
    this.redis = redis as WithTake;
  }

  /** The first connection (rejects when Redis is unreachable; reconnection continues in the background). */
  async connect(): Promise<void> {
    if (this.redis.status === 'wait') await this.redis.connect();
    else await this.ping();
  }

  async take(name: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.nodegateLease(this.prefix + name, this.self, String(ttlMs))) === 1;
  }

  /** One round trip; rejects while Redis is unreachable. */
  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await closeConnection(this.redis);
  }
}
