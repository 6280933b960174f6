import { pino } from 'pino';
import { redisSkipReason, REDIS_URL } from '../../../test/helpers/redis.ts';
import { ClusterHeads } from './heads-hub.ts';
import { headsHubContract } from './heads-hub.contract.ts';

const skip = await redisSkipReason('shared head suite');
const log = pino({ level: 'silent' });

/** One more instance's hub, connected to this run's Redis (or to none: a port nothing listens on). */
async function instance(url = REDIS_URL, timeoutMs = 2000): Promise<ClusterHeads> {
  const c = new ClusterHeads({ url, timeoutMs, log });
  await c.connect();
  return c;
}

headsHubContract('Redis (instances)', () => instance(), () => instance('redis://127.0.0.1:1', 200), { skip });
