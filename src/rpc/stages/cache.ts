import type { NetworkCache } from '../../cache/response-cache.ts';
import type { Stage } from '../call.ts';

/** Stage `cache` (networks with `cache.enabled`): the answer from the cache, or from the rest; says which in `call.cache`. */
export const cacheStage = (cache: NetworkCache): Stage => (call, next) => cache.run(call.method, call.params, () => next(call), call, call.looked);
