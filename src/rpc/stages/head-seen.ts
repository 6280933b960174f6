import { blockSeenIn } from '../../chain/block-seen.ts';
import type { Stage } from '../call.ts';

/**
 * Stage `head` (read-your-writes, docs/decisions.md §9): the network's head learns of any block the answer shows,
 * so that the caller's next `eth_blockNumber` is never below it; the call keeps that block (`seenBlock`) for the
 * transport, which may hold it as the floor of the caller's later reads (a socket's session). In cluster mode the
 * answer waits until the block it shows, or the head it is tied to, is published (shared-state/heads/).
 */
export const headSeenStage: Stage = (call, next) =>
  next(call).then((a) => {
    const n = a.error === undefined ? blockSeenIn(call.method, call.params, a.result) : undefined;
    const shown = call.network.head.sawBlock(call.spec, n, a);
    // The block the caller is shown: an `eth_blockNumber` may be answered with the network's head, not the node's.
    if (n !== undefined) call.seenBlock = shown === a ? n : blockSeenIn(call.method, call.params, shown.result);
    // Cluster mode: a block this instance learnt leaves it only once the other instances can know it too.
    const announced = call.network.head.announced();
    return announced ? announced.then(() => shown) : shown;
  });
