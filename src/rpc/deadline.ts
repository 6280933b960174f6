import type { RequestTrace } from '../tracing/tracing.ts';
import { performance } from 'node:perf_hooks'; // the global one is a getter on globalThis, called at each use
import { CallAborted } from '../errors/call-aborted.ts';
import { CallAbort, type CallSignal } from '../errors/on-abort.ts';
import { coarseClock, type Due } from '../background/coarse-clock.ts';

/**
 * A call's signal (a CallAbort that also knows when it ends, aborting then with -32015), let go once the call is
 * over (`RequestDeadline.done`).
 */
export class CallDeadline extends CallAbort implements Due {
  /** When its budget ends, on `performance.now()`'s clock. */
  dueAt = 0;
  /** Its budget, for the -32015 it aborts with. */
  budgetMs = 0;
  /** The calls it is the deadline of: calls of one request that start together with the same budget share one. */
  users = 1;

  due(): void {
    this.abort(new CallAborted('deadline', this.budgetMs));
  }
}

/**
 * Calls and requests are not given a timer each: one clock checks every deadline in flight (background/coarse-clock.ts),
 * so a budget ends up to one tick (20 ms) late: nothing next to budgets of seconds (rpc.timeoutMs is 30 s by
 * default, the floor 100 ms).
 */
const clock = coarseClock;

function starting(d: CallDeadline, budgetMs: number): CallDeadline {
  d.budgetMs = budgetMs;
  d.dueAt = performance.now() + budgetMs;
  clock.add(d);
  return d;
}

/**
 * One request's deadline: its signal aborts when its caller goes away (`callerGone`) or its whole budget
 * (rpc.requestTimeoutMs) ends; each call of it gets a signal of its own that also aborts at its method's budget
 * (rpc.timeoutMs, rpc.debugTimeoutMs). The signals go down to the node's HTTP request, which is aborted with them,
 * and a batch starts no item once the request's signal has aborted. Independent of HTTP: a transport says when
 * its caller is gone.
 */
export class RequestDeadline {
  private readonly own: RequestSignal;
  /**
   * The calls in flight: the request aborts them itself. A listener per call on the request's signal (and the
   * `setMaxListeners` it needed) cost more than the call's own work (docs/performance.md, "Changes").
   */
  private calls: Set<CallDeadline> | undefined;

  /**
   * The request's budget is on the clock from its first call: a request answered at once (a cache hit, a refusal)
   * never waits for anything, and costs no clock entry nor set.
   */
  constructor(budgetMs: number) {
    this.own = new RequestSignal(this);
    this.own.budgetMs = budgetMs;
    this.own.dueAt = performance.now() + budgetMs;
  }

  get signal(): CallSignal {
    return this.own;
  }

  /** The request is traced: its calls' signals carry its trace to their node calls. */
  traced(trace: RequestTrace): void {
    this.own.trace = trace;
  }

  /** The caller closed its connection before its answer: nothing more is started or waited for. */
  callerGone(): void {
    this.own.abort(new CallAborted('caller_gone'));
  }

  /** The request is answered: its deadline is let go, and what waited on it (see CallAbort.release). */
  end(): void {
    clock.remove(this.own);
    this.own.release();
  }

  /**
   * The signal of a request's only call (a single request): the request's own, brought forward to the call's
   * budget when that ends first (then it aborts with the call's budget, as the call's own would). One deadline and
   * one clock entry per single request, not two and a set. `done` leaves it alone; `end` lets it go.
   */
  only(budgetMs: number): CallDeadline {
    const own = this.own;
    if (own.aborted) return own;
    const dueAt = performance.now() + budgetMs;
    if (dueAt < own.dueAt) {
      own.dueAt = dueAt;
      own.budgetMs = budgetMs;
    }
    clock.add(own);
    return own;
  }

  /** The request's own end (its budget, its caller gone) aborts its calls in flight too. */
  abortCalls(reason: CallAborted): void {
    if (!this.calls) return;
    for (const c of this.calls) {
      clock.remove(c);
      c.abort(reason);
    }
    this.calls.clear();
  }

  /**
   * A signal for one call with a budget of `budgetMs`, aborted at that budget's end or with the request's; `done`
   * lets it go. Once the request has aborted, its own (already aborted) signal.
   */
  forCall(budgetMs: number): CallDeadline {
    if (this.own.aborted) return this.own;
    if (!this.calls) {
      this.calls = new Set();
      clock.add(this.own);
    }
    const d = starting(new CallDeadline(), budgetMs);
    d.trace = this.own.trace;
    this.calls.add(d);
    return d;
  }

  /**
   * Another call that starts with the one `d` is the deadline of, with the same budget (the items of a batch): it
   * ends at the same moment, so it shares `d` rather than costing a deadline, a clock entry and a listener of its
   * own (a tenth of a batch's CPU). `done` lets `d` go when the last of them is over.
   */
  join(d: CallDeadline): CallDeadline {
    d.users++;
    return d;
  }

  /** A call of this request is over (answered or failed): its deadline is let go, once no other call shares it. */
  done(signal: CallSignal): void {
    if (signal === this.own) return;
    const d = signal as CallDeadline;
    if (--d.users > 0) return;
    clock.remove(d);
    this.calls?.delete(d);
    d.release();
  }
}

/** A request's own signal: aborting it (its budget's end, its caller gone) aborts the request's calls in flight. */
class RequestSignal extends CallDeadline {
  constructor(private readonly request: RequestDeadline) {
    super();
  }

  override abort(reason: unknown): void {
    if (this.aborted) return;
    super.abort(reason);
    this.request.abortCalls(reason as CallAborted);
  }
}
