import type { Logger } from 'pino';
import type { FilterStore } from '../shared-state/filter-store/filter-store.ts';
import { MemoryFilterStore } from '../shared-state/filter-store/memory-filter-store.ts';
import { RedisFilterStore } from '../shared-state/filter-store/redis-filter-store.ts';

export interface OpenFilterStoreOptions {
  /** `limits.redisUrl` (REDIS_URL): cluster mode, filters in Redis; absent: in this process's memory. */
  redisUrl?: string;
  /** `limits.redisTimeoutMs`: a slower Redis command fails the filter call with it. */
  timeoutMs: number;
  log: Logger;
}

/**
 * The configured filter store. In cluster mode the instances share filters through Redis (a filter made on one
 * polls on any, and outlives a restart), waiting for the first connection at most its connect time-out; when that
 * fails the gateway starts anyway, and filter calls answer FILTERS_UNAVAILABLE until Redis answers.
 */
export async function openFilterStore(options: OpenFilterStoreOptions): Promise<FilterStore> {
  if (!options.redisUrl) return new MemoryFilterStore();
  const store = new RedisFilterStore({ url: options.redisUrl, commandTimeoutMs: options.timeoutMs, log: options.log.child({ part: 'filters' }) });
  await store.connect();
  return store;
}
