import { blockSeenIn } from '../../chain/block-seen.ts';
import type { Stage } from '../call.ts';

/**
 * Stage `head` (read-your-writes, docs/decisions.md §9): the network's head learns of any block the answer shows,
 * so that the caller's next `eth_blockNumber` is never below it; the call keeps that block (`seenBlock`) for the
 * transport, which may hold it as the floor of the caller's later reads (a socket's session).
 */
export const headSeenStage: Stage = (call, next) =>
  next(call).then((a) => {
    const n = a.error === undefined ? blockSeenIn(call.method, call.params, a.result) : undefined;
    if (n !== undefined) call.seenBlock = n;
    return call.network.head.sawBlock(call.method, n, a);
  });
