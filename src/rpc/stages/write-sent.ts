import type { Stage } from '../call.ts';

/**
 * Stage `write` (methods that send a transaction only): the head is about to move (a block per transaction on
 * automining chains), and the chain module's subscribers (pending-transaction filters) hear of the transaction.
 */
export const writeSentStage: Stage = (call, next) =>
  next(call).then((a) => {
    if (a.error === undefined) call.network.chain.transactionSent(a.result);
    return a;
  });
