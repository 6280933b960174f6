/**
 * Writes that must be done within a time (server.writeTimeoutMs), checked by one coarse timer shared by all of them,
 * not a timer per write: each write is put in a map with its deadline when it begins, and a sweep every quarter of
 * the time-out cuts off those past it (their connection closed: what they held is given back) and forgets those
 * done. The time-out is the same for all, so the map's order is the deadlines' order and a sweep stops at the first
 * write not yet due. The timer runs only while writes are watched.
 *
 * Only writes that hold bytes of the response budget are watched (rpc/response-budget.ts): a client that does not
 * read keeps them in the gateway's memory, and the budget's share for its key, account and address, for as long as
 * its connection stays open.
 */
export class WriteDeadlines<T> {
  private readonly due = new Map<T, number>();
  private timer: ReturnType<typeof setInterval> | undefined = undefined;

  constructor(
    private readonly timeoutMs: number,
    /** Whether the write is over: written, or its connection already gone. */
    private readonly done: (w: T) => boolean,
    /** Closes the write's connection. */
    private readonly cutOff: (w: T) => void,
  ) {}

  /** Watches `w` from now until it is done, or cut off past the time-out. */
  watch(w: T): void {
    if (this.due.has(w)) return;
    this.due.set(w, Date.now() + this.timeoutMs);
    if (this.timer === undefined) {
      this.timer = setInterval(this.sweep, Math.max(25, Math.floor(this.timeoutMs / 4)));
      this.timer.unref();
    }
  }

  private readonly sweep = (): void => {
    const now = Date.now();
    for (const [w, at] of this.due) {
      if (this.done(w)) {
        this.due.delete(w);
        continue;
      }
      if (at > now) break;
      this.due.delete(w);
      this.cutOff(w);
    }
    // Done writes behind one not yet due are forgotten at a later sweep.
    if (this.due.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  };
}
