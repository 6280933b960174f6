/**
 * Bytes held at once against a total, shared by every holder: the node answers being read (answer-budget.ts) and
 * the responses being written (rpc/response-budget.ts). A holder takes before it keeps bytes and gives them back when
 * it lets them go; a take that would pass the total takes nothing.
 */
export class ByteBudget {
  private held = 0;

  constructor(readonly totalBytes: number) {}

  /** Takes `n` bytes; false when that would pass the total (nothing is taken then). */
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
