import type { CallSignal } from '../errors/on-abort.ts';

/**
 * Aborted once every one of `signals` has: a node request carrying several calls (one upstream batch) is aborted
 * only when none of them still waits for it. A counter of the signals not yet aborted, fed by each signal's one
 * listener (errors/on-abort.ts); a CallSignal itself, so that a node request of one call waits on that call's own
 * signal with nothing made for it (a wrapper per node request cost a share of the hot path: docs/performance.md,
 * "Changes"). Undefined when one of them cannot be aborted.
 */
export function abortedWithAll(signals: ReadonlyArray<CallSignal | undefined>): CallSignal | undefined {
  for (const s of signals) if (s === undefined) return undefined;
  return new AllAborted(signals as CallSignal[]);
}

/** A class, not closures per node request: one object made per node request, its steps shared as methods. */
class AllAborted implements CallSignal {
  private fn: (() => void) | undefined;
  private off: (() => void) | undefined;

  constructor(private readonly all: CallSignal[]) {}

  get aborted(): boolean {
    for (const s of this.all) if (!s.aborted) return false;
    return true;
  }

  get reason(): unknown {
    return this.all[0].reason;
  }

  /**
   * One listener at a time, on the first signal still live: when it aborts, the next live one is listened to, and
   * `fn` runs when none is left. A listener on every call's signal (ten for a batch of ten) cost a share of a
   * batch's time (docs/performance.md). One waiter per node request (postText's).
   */
  onAbort(fn: () => void): () => void {
    this.fn = fn;
    this.listen();
    return () => { this.fn = undefined; this.off?.(); };
  }

  private listen(): void {
    for (const s of this.all) {
      if (!s.aborted) {
        this.off = s.onAbort(() => this.listen());
        return;
      }
    }
    this.fn?.();
  }
}
