/**
 * A call's deadline as the layers under it see it (issue 18): whether it has ended, why, and a way to hear when it
 * does. Not an AbortSignal: Node's AbortController/AbortSignal (an EventTarget) cost ~60 µs of CPU per call on the
 * bench machine, more than the call's own work; a batch of 10 reads went from 756 to 1,541 µs per request with one
 * per call (docs/performance.md, "Issue 18: before and after"). This is a flag, a reason and a set of callbacks,
 * made only when someone waits. Lives in errors/ beside CallAborted (its reasons), since both the request stages
 * and the upstream clients read it.
 */
export interface CallSignal {
  readonly aborted: boolean;
  /** Why it aborted (a CallAborted), once it has. */
  readonly reason: unknown;
  /** Calls `fn` once when it aborts (not if it already has: check `aborted` first); returns what stops that. */
  onAbort(fn: () => void): () => void;
}

/** A CallSignal and the way to abort it. */
export class CallAbort implements CallSignal {
  aborted = false;
  reason: unknown = undefined;
  private waiters: Set<() => void> | undefined;

  onAbort(fn: () => void): () => void {
    const set = (this.waiters ??= new Set());
    set.add(fn);
    return () => void set.delete(fn);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const set = this.waiters;
    this.waiters = undefined;
    if (set) for (const fn of set) fn();
  }
}
