import { CallAborted } from '../errors/call-aborted.ts';
import { CallAbort, type CallSignal } from '../errors/on-abort.ts';

/** One call's signal, and what lets its timer go once the call is over. */
export interface CallDeadline {
  readonly signal: CallSignal;
  done(): void;
}

/**
 * One request's deadline (issue 18): its signal aborts when its caller goes away (`callerGone`) or its whole budget
 * (rpc.requestTimeoutMs) ends; each call of it gets a signal of its own that also aborts at its method's budget
 * (rpc.timeoutMs, rpc.debugTimeoutMs). The signals go down to the node's HTTP request, which is aborted with them,
 * and a batch starts no item once the request's signal has aborted. Independent of HTTP: a transport says when
 * its caller is gone.
 */
export class RequestDeadline {
  private readonly controller = new CallAbort();
  private readonly timer: NodeJS.Timeout;
  /**
   * The calls in flight: the request aborts them itself. A listener per call on the request's signal (and the
   * `setMaxListeners` it needed) cost more than the call's own work (docs/performance.md, "Issue 18").
   */
  private readonly calls = new Set<CallAbort>();

  constructor(budgetMs: number) {
    this.timer = setTimeout(() => this.abort(new CallAborted('deadline', budgetMs)), budgetMs);
  }

  get signal(): CallSignal {
    return this.controller;
  }

  /** The caller closed its connection before its answer: nothing more is started or waited for. */
  callerGone(): void {
    this.abort(new CallAborted('caller_gone'));
  }

  /** The request is answered: its timer is let go. */
  end(): void {
    clearTimeout(this.timer);
  }

  private abort(reason: CallAborted): void {
    if (this.controller.aborted) return;
    this.controller.abort(reason);
    for (const c of this.calls) c.abort(reason);
    this.calls.clear();
  }

  /** A signal for one call with a budget of `budgetMs`, aborted at that budget's end or with the request's. */
  forCall(budgetMs: number): CallDeadline {
    const parent = this.controller;
    if (parent.aborted) return { signal: parent, done: () => {} };
    const own = new CallAbort();
    const timer = setTimeout(() => own.abort(new CallAborted('deadline', budgetMs)), budgetMs);
    this.calls.add(own);
    return {
      signal: own,
      done: () => {
        clearTimeout(timer);
        this.calls.delete(own);
      },
    };
  }
}

/** `p`, or a rejection with the signal's reason as soon as it aborts (whatever a stage below does with the signal). */
export function untilAborted<T>(p: Promise<T>, signal: CallSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    // Through the signal's one listener (errors/on-abort.ts), and let go as soon as `p` settles.
    const off = signal.onAbort(() => reject(signal.reason));
    p.then((v) => { off(); resolve(v); }, (e) => { off(); reject(e); });
  });
}
