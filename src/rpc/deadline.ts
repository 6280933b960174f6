import { setMaxListeners } from 'node:events';
import { CallAborted } from '../errors/call-aborted.ts';

/** One call's signal, and what lets its timer go once the call is over. */
export interface CallDeadline {
  readonly signal: AbortSignal;
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
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;

  constructor(budgetMs: number) {
    // Each call in flight listens to it (rpc.batchConcurrency of them): not a leak.
    setMaxListeners(0, this.controller.signal);
    this.timer = setTimeout(() => this.controller.abort(new CallAborted('deadline', budgetMs)), budgetMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The caller closed its connection before its answer: nothing more is started or waited for. */
  callerGone(): void {
    this.controller.abort(new CallAborted('caller_gone'));
  }

  /** The request is answered: its timer is let go. */
  end(): void {
    clearTimeout(this.timer);
  }

  /** A signal for one call with a budget of `budgetMs`, aborted at that budget's end or with the request's. */
  forCall(budgetMs: number): CallDeadline {
    const parent = this.controller.signal;
    if (parent.aborted) return { signal: parent, done: () => {} };
    const own = new AbortController();
    const fromParent = () => own.abort(parent.reason);
    const timer = setTimeout(() => own.abort(new CallAborted('deadline', budgetMs)), budgetMs);
    parent.addEventListener('abort', fromParent, { once: true });
    return {
      signal: own.signal,
      done: () => {
        clearTimeout(timer);
        parent.removeEventListener('abort', fromParent);
      },
    };
  }
}

/** `p`, or a rejection with the signal's reason as soon as it aborts (whatever a stage below does with the signal). */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
