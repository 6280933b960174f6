import type { RequestTrace } from '../tracing/tracing.ts';
/**
 * A call's deadline as the layers under it see it: whether it has ended, why, and a way to hear when it
 * does. Not an AbortSignal: Node's AbortController/AbortSignal (an EventTarget) cost ~60 µs of CPU per call on the
 * bench machine, more than the call's own work; a batch of 10 reads went from 756 to 1,541 µs per request with one
 * per call (docs/performance.md, "Changes"). This is a flag, a reason and a set of callbacks,
 * made only when someone waits. Lives in errors/ beside CallAborted (its reasons), since both the request stages
 * and the upstream clients read it.
 */
export interface CallSignal {
  readonly aborted: boolean;
  /** Why it aborted (a CallAborted), once it has. */
  readonly reason: unknown;
  /** Calls `fn` once when it aborts (not if it already has: check `aborted` first); returns what stops that. */
  onAbort(fn: () => void): () => void;
  /**
   * The traced request the call is made for (tracing on, request sampled): its upstream attempts are spans under it.
   * On the signal because the signal already goes to every node call (hedges, retries, pieces).
   */
  readonly trace?: RequestTrace;
}

/** A CallSignal and the way to abort it. */
export class CallAbort implements CallSignal {
  aborted = false;
  reason: unknown = undefined;
  trace: RequestTrace | undefined = undefined;
  /** The first waiter (most signals have one: the request run's, rpc/run.ts), then a set for the rest. */
  private first: (() => void) | undefined;
  private rest: Set<() => void> | undefined;

  onAbort(fn: () => void): () => void {
    if (this.first === undefined) {
      this.first = fn;
      return () => { if (this.first === fn) this.first = undefined; };
    }
    const set = (this.rest ??= new Set());
    set.add(fn);
    return () => void set.delete(fn);
  }

  /**
   * Nothing will abort it any more (what it was the deadline of is over): its waiters are let go at once, so that
   * what they hold (a whole request's state) does not live on with it, held by a connection's last request.
   */
  release(): void {
    this.first = undefined;
    this.rest = undefined;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const first = this.first;
    const set = this.rest;
    this.first = undefined;
    this.rest = undefined;
    if (first) first();
    if (set) for (const fn of set) fn();
  }
}
