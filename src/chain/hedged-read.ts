/**
 * A hedged read (upstreams.hedgeMinMs, .hedgeMaxMs): a read not answered within its member's usual time is also
 * sent to a second usable member, and the first answer that is not to be retried wins. When the hedge is due is
 * kept by the coarse clock (background/coarse-clock.ts), not a timer per read.
 */
import { performance } from 'node:perf_hooks'; // the global one is a getter on globalThis, called at each use
import type { Due } from '../background/coarse-clock.ts';
import { CallAborted } from '../errors/call-aborted.ts';
import { CallAbort, type CallSignal } from '../errors/on-abort.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import { pick } from './member-choice.ts';
import { record } from './member-outcome.ts';
import type { Attempt, PoolState } from './pool-state.ts';
import type { Route } from './route.ts';
import type { UpstreamMember } from './upstream-member.ts';
import { ATTEMPT, BACKGROUND, HEDGE } from './upstream-spend.ts';

/**
 * A read to `first`, also sent to a second usable member if `first` has not answered within its usual time
 * (`hedgeAfter`: a node stopped with SIGSTOP held every reader for seconds): the first answer that is
 * not to be retried wins and the other call is aborted (its node request too, when nothing else waits on it). A
 * `first` overtaken by the hedge counts as a failure to answer, so a stalled node's breaker opens after
 * `breakerFailures` reads in a row overtaken and it takes no more reads, while any answer it gives resets that.
 * When both fail, the last failure; a retryable answer stands when the other call failed.
 */
export function hedged(pool: PoolState, first: UpstreamMember, hedge: { minMs: number; maxMs: number }, spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route, signal?: CallSignal): Promise<Attempt> {
  return new Promise((resolve, reject) => {
    let done = false;
    let running = 1;
    let kept: Attempt | undefined;
    const calls: Raced[] = [];
    const finish = (got: Attempt | undefined, err?: unknown) => {
      done = true;
      pool.clock.remove(timer);
      for (const c of calls) if (c.member !== got?.member) c.stop();
      if (got) resolve(got);
      else reject(err);
    };
    const run = (m: UpstreamMember) => {
      const call = new Raced(m, signal);
      calls.push(call);
      pool.attempt(m, spec, params, timeoutMs, call.signal, m !== first ? HEDGE : route.background ? BACKGROUND : ATTEMPT).then((got) => {
        call.release();
        if (done) return;
        running--;
        if (got.outcome.retry && running > 0) return void (kept = { ...got, member: m });
        // The hedge answered while `first` still says nothing: `first` did not answer in its usual time.
        if (m !== first && !calls[0].over) record(pool, first, { kind: 'timeout', retry: true, breaker: 'failure' }, new Error(`overtaken by ${m.label}: no answer in ${Math.round(timer.afterMs)} ms`));
        finish({ ...got, member: m });
      }, (err) => {
        call.release();
        if (done) return;
        running--;
        if (running > 0) return;
        if (kept) finish(kept);
        else finish(undefined, err);
      });
    };
    const timer: Due & { afterMs: number } = {
      afterMs: first.hedgeAfter(hedge.minMs, hedge.maxMs),
      dueAt: 0,
      due: () => {
        if (done || signal?.aborted) return;
        const best = pool.best();
        const lagFrom = pool.lagFrom?.() ?? best;
        const now = pool.now();
        const second = pick(pool, route, first, spec.name);
        if (second === first || !second.usable(best, pool.policy, now, lagFrom) || !second.hasRoom(now)) return;
        running++;
        run(second);
      },
    };
    timer.dueAt = performance.now() + timer.afterMs;
    pool.clock.add(timer);
    run(first);
  });
}

/**
 * One of a hedged read's calls: its own signal, aborted with the caller's or when the other call has won (as a
 * caller gone: the node is not to blame, attempt() leaves its breaker as it was).
 */
class Raced {
  readonly signal = new CallAbort();
  over = false;
  private readonly off: (() => void) | undefined;

  constructor(readonly member: UpstreamMember, parent: CallSignal | undefined) {
    this.signal.trace = parent?.trace;
    if (parent?.aborted) this.signal.abort(parent.reason);
    else if (parent) this.off = parent.onAbort(() => this.signal.abort(parent.reason));
  }

  /** The call has its answer or failure. */
  release(): void {
    this.over = true;
    this.off?.();
  }

  /** The other call won: this one is let go. */
  stop(): void {
    if (this.over) return;
    this.release();
    this.signal.abort(new CallAborted('caller_gone'));
  }
}
