import type { CallSignal } from '../errors/on-abort.ts';

/**
 * Aborted once every one of `signals` has: a node request carrying several calls (one upstream batch) is aborted
 * only when none of them still waits for it. A counter of the signals not yet aborted, fed by each signal's one
 * listener (errors/on-abort.ts); a CallSignal itself, so that a node request of one call waits on that call's own
 * signal with nothing made for it (a wrapper per node request cost a share of the hot path: docs/performance.md,
 * "Issue 18: before and after"). Undefined when one of them cannot be aborted.
 */
export function abortedWithAll(signals: ReadonlyArray<CallSignal | undefined>): CallSignal | undefined {
  if (signals.some((s) => s === undefined)) return undefined;
  const all = signals as CallSignal[];
  const left = () => all.reduce((n, s) => (s.aborted ? n : n + 1), 0);
  return {
    get aborted() { return left() === 0; },
    get reason() { return all[0].reason; },
    onAbort(fn) {
      const live = all.filter((s) => !s.aborted);
      let n = live.length;
      const offs = live.map((s) => s.onAbort(() => { if (--n === 0) fn(); }));
      return () => { for (const off of offs) off(); };
    },
  };
}
