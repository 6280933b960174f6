import { pino } from 'pino';
import { redisSkipReason, REDIS_URL, removeKeys, testPrefix } from '../../../test/helpers/redis.ts';
import { after } from 'node:test';
import { RedisLeases } from '../leases/redis-leases.ts';
import { openSharedState } from '../open-shared-state.ts';
import { CONTRACT_BACKOFF } from '../login-backoff/login-backoff.contract.ts';
import { headsHubContract } from './heads-hub.contract.ts';
import { RedisHeads } from './redis-heads.ts';

const skip = await redisSkipReason('shared head suite');
const log = pino({ level: 'silent' });
const prefix = testPrefix();
after(() => (skip ? undefined : removeKeys(prefix)));
const closing: Array<{ close(): Promise<void> }> = [];
after(() => Promise.all(closing.map((c) => c.close())));

/** One more instance's hub (and its leases), connected to this run's Redis. */
async function instance(): Promise<RedisHeads> {
  const leases = new RedisLeases({ url: REDIS_URL, prefix, commandTimeoutMs: 2000 });
  const heads = new RedisHeads({ url: REDIS_URL, timeoutMs: 2000, leases, prefix });
  await Promise.all([leases.connect(), heads.connect()]);
  closing.push(leases);
  return heads;
}

/** An instance whose Redis never answers (nothing listens on port 1), as the shared state opens it. */
async function unreachable() {
  const shared = await openSharedState({ redisUrl: 'redis://127.0.0.1:1', redisTimeoutMs: 200, backoff: CONTRACT_BACKOFF, log });
  closing.push(shared);
  return shared.heads!;
}

headsHubContract('Redis (instances)', instance, { skip, unreachable });
