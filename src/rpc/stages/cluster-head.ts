import type { ChainHead } from '../../chain/chain-head.ts';
import type { SharedHead } from '../../shared-state/heads/heads-hub.ts';
import type { Stage } from '../call.ts';

/**
 * Stage `cluster` (cluster mode, methods whose answer depends on the head): reads the head the instances share,
 * with a request sent after the call arrived, and moves this instance's head up to it before the call goes on, so
 * that no instance answers from a head older than a block another instance has shown (shared-state/heads/). When
 * Redis fails the read says nothing and the call goes on with this instance's head.
 */
export const clusterHeadStage = (shared: SharedHead, head: ChainHead): Stage => (call, next) =>
  shared.read().then((n) => {
    if (n !== undefined) head.advance(n, true);
    return next(call);
  });
