import { Redis } from 'ioredis';

/**
 * The Redis connections of cluster mode, made one way for every kind that keeps something there: the per-second
 * limits and the guards on them, filters, the shared head, leases, the login back-off. A failed command rejects, and
 * the shared state's fallback (fallback.ts) answers from the kind's local stand-in (local limits,
 * FILTERS_UNAVAILABLE, the instance's own head); none may wait on Redis, so a command connection fails fast rather
 * than queue.
 */

/** Reconnecting, in the background: sooner after a blip, every 2 s at most during an outage. */
const reconnectDelay = (attempt: number): number => Math.min(attempt * 200, 2000);

export interface RedisConnectionOptions {
  /** A command slower than this fails (config `limits.redisTimeoutMs`). */
  commandTimeoutMs: number;
  /** Giving up on a connection attempt. Default 1000 ms. */
  connectTimeoutMs?: number;
}

/**
 * A connection for commands, not yet connected (`connect()` makes the first connection): no offline queue (a
 * command while disconnected fails at once), no retry of a failed command, every command bounded by
 * `commandTimeoutMs`. Failures reach callers as rejected commands; the `error` listener only keeps ioredis from
 * printing every reconnect attempt.
 */
export function commandConnection(url: string, o: RedisConnectionOptions): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: o.commandTimeoutMs,
    connectTimeout: o.connectTimeoutMs ?? 1000,
    retryStrategy: reconnectDelay,
  });
  redis.on('error', () => {});
  return redis;
}

/**
 * A connection that only listens (SUBSCRIBE), not yet connected: no command time-out (it waits for messages as long
 * as it lives), ioredis's defaults otherwise (it subscribes again by itself after a reconnect).
 */
export function subscriberConnection(url: string): Redis {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 1000, retryStrategy: reconnectDelay });
  redis.on('error', () => {});
  return redis;
}

/** host:port, for logs (never the URL: it may hold a password). */
export function redisWhere(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 6379}`;
}

/** The commands a connection holds unanswered (ioredis's own queues: sent, and waiting to be sent). */
type Queued = { command: { promise: Promise<unknown> } };
const queuedOf = (redis: Redis): Queued[] => {
  const q = redis as unknown as { offlineQueue?: { toArray(): Queued[] }; commandQueue?: { toArray(): Queued[] } };
  return [...(q.offlineQueue?.toArray() ?? []), ...(q.commandQueue?.toArray() ?? [])];
};

/**
 * Closes a connection without waiting on a server that does not answer (quit() waits for a reply). A close rejects
 * every command still queued, and some have no caller to hear it: ioredis's own SUBSCRIBE after a reconnect is sent
 * with no handler, and a rejection nobody handles ends the process. Each gets one here first; a caller still
 * waiting on its command gets the rejection as before.
 */
export async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => {});
  for (const item of queuedOf(redis)) item.command.promise?.catch(() => {});
  redis.disconnect();
}
