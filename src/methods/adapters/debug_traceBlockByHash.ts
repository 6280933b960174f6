import type { Adapter } from './adapter.ts';
import { fillBlockSteps } from './struct-logs-of-block.ts';

/** Struct logs anvil leaves empty without `--steps-tracing`, filled in (struct-logs-of-block.ts). */
export const debug_traceBlockByHash: Adapter = async (method, params, next) =>
  fillBlockSteps(await next(method, params), params[1], next, ['eth_getBlockByHash', params[0]]);
