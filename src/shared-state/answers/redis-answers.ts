import type { Redis } from 'ioredis';
import { closeConnection, commandConnection, subscriberConnection } from '../redis-connections.ts';
import { FIND_LUA, FORGET_LUA, KEEP_LUA, RELEASE_LUA } from './redis-answer-scripts.ts';
import { keptBytes, type Found, type KeptAnswer, type SharedAnswers } from './shared-answers.ts';

export interface RedisAnswersOptions {
  url: string;
  /** Prepended to every key (the deployment's prefix and `ac:`). */
  prefix: string;
  /** The answers' bytes together (`cache.shared.maxBytes`); past it, those soonest to expire go. */
  maxBytes: number;
  /** A slower command fails (`cache.shared.timeoutMs`): a miss does not wait long on Redis before its node. */
  commandTimeoutMs: number;
}

type Scripted = Redis & {
  ngFind(answer: string, lease: string, leaseMs: number): Promise<string | number>;
  ngKeep(idx: string, sizes: string, bytes: string, lease: string, ...argv: Array<string | number>): Promise<number>;
  ngRelease(lease: string, key: string, channel: string): Promise<void>;
  ngForget(idx: string, sizes: string, bytes: string, pre: string, ...keys: string[]): Promise<number>;
};

/** A value as kept: the account that filled it, NUL, the result's JSON text (which never holds a raw NUL). */
const encode = (v: KeptAnswer) => `${v.filledBy}\u0000${v.raw}`;
function decode(s: string): KeptAnswer {
  const at = s.indexOf('\u0000');
  return { filledBy: s.slice(0, at), raw: s.slice(at + 1) };
}
/** A glob pattern matching exactly `s` (ZSCAN MATCH). */
const literal = (s: string) => s.replace(/[*?[\]\\]/g, '\\$&');

/**
 * Shared answers in Redis (redis-answer-scripts.ts says how they are laid out): a lookup and its lease in one round
 * trip, waiters woken by a message on one channel per prefix (one listening connection per instance).
 */
export class RedisAnswers implements SharedAnswers {
  private readonly redis: Scripted;
  private readonly listener: Redis;
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly k: { idx: string; sizes: string; bytes: string; channel: string; answer: string; lease: string };

  constructor(private readonly o: RedisAnswersOptions) {
    const p = o.prefix;
    this.k = { idx: `${p}ai`, sizes: `${p}as`, bytes: `${p}ab`, channel: `${p}ak`, answer: `${p}a:`, lease: `${p}al:` };
    const redis = commandConnection(o.url, { commandTimeoutMs: o.commandTimeoutMs });
    redis.defineCommand('ngFind', { numberOfKeys: 2, lua: FIND_LUA });
    redis.defineCommand('ngKeep', { numberOfKeys: 4, lua: KEEP_LUA });
    redis.defineCommand('ngRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
    redis.defineCommand('ngForget', { numberOfKeys: 3, lua: FORGET_LUA });
    this.redis = redis as Scripted;
    this.listener = subscriberConnection(o.url);
    this.listener.on('message', (_channel: string, key: string) => {
      for (const wake of this.waiters.get(key) ?? []) wake();
    });
  }

  /** The first connections (rejects when Redis is unreachable; reconnection continues in the background). */
  async connect(): Promise<void> {
    if (this.redis.status === 'wait') await this.redis.connect();
    else await this.ping();
    if (this.listener.status === 'wait') {
      await this.listener.connect();
      await this.listener.subscribe(this.k.channel);
    }
  }

  async find(key: string, leaseMs: number): Promise<Found> {
    const r = await this.redis.ngFind(this.k.answer + key, this.k.lease + key, leaseMs);
    if (typeof r === 'string') return { kept: decode(r) };
    return { lease: r === 1 ? 'taken' : 'held' };
  }

  async keep(key: string, value: KeptAnswer, ttlMs: number): Promise<void> {
    const { idx, sizes, bytes, channel, answer, lease } = this.k;
    await this.redis.ngKeep(idx, sizes, bytes, lease + key, key, encode(value), Math.max(1, Math.round(ttlMs)), Date.now(), this.o.maxBytes, keptBytes(key, value), answer, channel);
  }

  async release(key: string): Promise<void> {
    await this.redis.ngRelease(this.k.lease + key, key, this.k.channel);
  }

  awaitKept(key: string, waitMs: number): Promise<KeptAnswer | undefined> {
    return new Promise((resolve) => {
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      const waiters = set;
      let settled = false;
      const done = (v: KeptAnswer | undefined) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        waiters.delete(heard);
        if (waiters.size === 0) this.waiters.delete(key);
        resolve(v);
      };
      // After the message, nothing kept means let go: the waiter fetches for itself.
      const look = (heardOf: boolean) => void this.redis.get(this.k.answer + key).then(
        (s) => (s !== null ? done(decode(s)) : heardOf ? done(undefined) : undefined),
        () => done(undefined),
      );
      const heard = () => look(true);
      const timer = setTimeout(done, waitMs, undefined);
      waiters.add(heard);
      // Kept between the lookup and this wait: its message went before anyone listened, so look once.
      look(false);
    });
  }

  async drop(prefix: string): Promise<void> {
    const { idx, sizes, bytes, answer } = this.k;
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.zscan(idx, cursor, 'MATCH', `${literal(prefix)}*`, 'COUNT', 500);
      cursor = next;
      const keys = flat.filter((_, i) => i % 2 === 0);
      if (keys.length > 0) await this.redis.ngForget(idx, sizes, bytes, answer, ...keys);
    } while (cursor !== '0');
  }

  /** One round trip; rejects while Redis is unreachable. */
  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    for (const set of this.waiters.values()) for (const wake of set) wake();
    await Promise.all([closeConnection(this.redis), closeConnection(this.listener)]);
  }
}
