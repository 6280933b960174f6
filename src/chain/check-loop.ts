/** Whether a caller came since the last round: set by the request path (`Chain.asked`), cleared by each round. */
export interface Callers {
  asked: boolean;
}

/**
 * When a network's rounds of checks run: one every `intervalMs`, one at a time (callers of `check` share the round
 * under way), and fewer while the network is idle (`whenIdle`): nobody called it for a while and nothing follows its
 * blocks. The first caller after idle rounds waits for a full round (`wake`), so it is answered from a fresh head.
 */
export class CheckLoop {
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  /**
   * The round under way is an idle one; an idle round ran since the last full one (chain ids of confirmed members
   * unread since): a caller waking the network waits for a full round.
   */
  private checkingIdle = false;
  private fullDue = false;
  /**
   * Idle checks (`whenIdle`): rounds the timer skips between two while the network is idle, 0 for none; after how
   * long without a caller it is idle (ms); when a round last found a caller (start counts as one); `skipped`, rounds
   * skipped since the last.
   */
  private idleSkips = 0;
  private idleAfterMs = Infinity;
  private askedAt = Date.now();
  private skipped = 0;

  constructor(
    private readonly callers: Callers,
    private readonly intervalMs: number,
    /** One round of checks; `idle`: a round of an idle network, which serves nobody. */
    private readonly round: (idle: boolean) => Promise<void>,
    /** Someone follows the network's blocks (subscriptions, webhooks): it is never idle. */
    private readonly following: () => boolean,
  ) {}

  /** The timer runs: rounds come by themselves (the first round is the one before it starts). */
  get started(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * A round every `everyMs` instead of every `intervalMs` once nobody called the network for `afterMs` and nothing
   * follows its blocks. Not for a network whose head is shared with other instances (`shared`): they are called,
   * this one checks.
   */
  whenIdle(everyMs: number, afterMs: number, shared: boolean): void {
    this.idleSkips = shared ? 0 : Math.max(0, Math.ceil(everyMs / this.intervalMs) - 1);
    this.idleAfterMs = afterMs;
  }

  /** One round of checks of every upstream (one round at a time; callers share it). */
  check(idle = false): Promise<void> {
    if (this.checking) return this.checking;
    this.checkingIdle = idle;
    this.fullDue = idle;
    return (this.checking = this.round(idle).finally(() => { this.checking = undefined; this.checkingIdle = false; }));
  }

  /**
   * A caller asks the network (called when `asked` is false, once a round): nothing to wait for when the last
   * round is recent; after idle rounds were skipped, a round now, waited for at most `intervalMs`, so the call
   * is answered from a fresh head, not one up to idleCheckMs old.
   */
  wake(): Promise<void> | undefined {
    this.callers.asked = true;
    if (this.skipped === 0 && !this.fullDue) return undefined;
    this.skipped = 0;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((r) => { timer = setTimeout(r, this.intervalMs); });
    // A full round under way serves; an idle one read no chain id: a full round after it.
    const full = this.checking && !this.checkingIdle ? this.checking : (this.checking ?? Promise.resolve()).then(() => this.check());
    return Promise.race([full, bound]).finally(() => clearTimeout(timer));
  }

  private tick(): void {
    const now = Date.now();
    if (this.callers.asked) this.askedAt = now;
    if (this.idleSkips > 0 && !this.callers.asked && this.skipped < this.idleSkips && now - this.askedAt >= this.idleAfterMs && !this.following()) {
      this.skipped++;
      return;
    }
    const idle = this.skipped > 0;
    this.skipped = 0;
    this.callers.asked = false;
    void this.check(idle);
  }
}
