import { ByteBudget } from './byte-budget.ts';

/**
 * Bytes of node answers the gateway holds at once, across every call of every key (rpc.maxAnswerBytesInFlight).
 * `rpc.maxAnswerBytes` bounds one answer; this bounds their sum, so that twenty callers each asking for a trace
 * just under the per-answer limit cannot together take the process's memory. Answers are counted as they stream
 * in: a call whose next chunk would pass the budget is cut off there and answered -32005 `answers_busy`
 * (retryable), and the bytes it held are given back at once.
 *
 * The count covers an answer from its first byte until the upstream has parsed it; the parsed value that then
 * travels to the caller is not counted (it is of the same order, and gone once the answer is written).
 */
export class AnswerBudget extends ByteBudget {
  constructor(
    /** Largest answer to one call (rpc.maxAnswerBytes). */
    readonly maxAnswerBytes: number,
    /** Largest sum of answers held at once (rpc.maxAnswerBytesInFlight), ≥ maxAnswerBytes. */
    totalBytes: number,
  ) {
    super(totalBytes);
  }
}

/** No budget: for the gateway's own calls to a node it runs (the supervisor's internal client). */
export const UNBOUNDED_ANSWERS = new AnswerBudget(Infinity, Infinity);
