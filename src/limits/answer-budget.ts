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
export class AnswerBudget {
  private held = 0;

  constructor(
    /** Largest answer to one call (rpc.maxAnswerBytes). */
    readonly maxAnswerBytes: number,
    /** Largest sum of answers held at once (rpc.maxAnswerBytesInFlight), ≥ maxAnswerBytes. */
    readonly totalBytes: number,
  ) {}

  /** Takes `n` bytes for an answer being read; false when that would pass the budget (nothing is taken). */
  take(n: number): boolean {
    if (this.held + n > this.totalBytes) return false;
    this.held += n;
    return true;
  }

  give(n: number): void {
    this.held -= n;
  }

  /** Bytes held now, for tests and metrics. */
  get inFlight(): number {
    return this.held;
  }
}

/** No budget: for the gateway's own calls to a node it runs (the supervisor's internal client). */
export const UNBOUNDED_ANSWERS = new AnswerBudget(Infinity, Infinity);
