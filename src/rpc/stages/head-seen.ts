import type { Stage } from '../call.ts';

/**
 * Stage `head` (read-your-writes, docs/decisions.md §9): the network's head learns of any block the answer shows,
 * so that the caller's next `eth_blockNumber` is never below it.
 */
export const headSeenStage: Stage = (call, next) => next(call).then((a) => call.network.head.seen(call.method, call.params, a));
