import type { CallSignal } from '../errors/on-abort.ts';

/**
 * What a node request waits on to be aborted: `aborted`/`reason` now, `listen(fn)` for later (returns what stops
 * listening). Not an AbortSignal: making one per node request, with a listener on each call's signal, cost a
 * large share of the hot path (docs/performance.md, "Issue 18: before and after").
 */
export interface AbortWatch {
  readonly aborted: boolean;
  readonly reason: any; // as AbortSignal.reason: what the aborter gave
  listen(fn: () => void): () => void;
}

/** One call's signal as a watch. */
export function watchOne(signal: CallSignal | undefined): AbortWatch | undefined {
  if (!signal) return undefined;
  return {
    get aborted() { return signal.aborted; },
    get reason() { return signal.reason; },
    listen: (fn) => signal.onAbort(fn),
  };
}

/**
 * Aborted once every one of `signals` has: a node request carrying several calls (one upstream batch) is aborted
 * only when none of them still waits for it. A counter of the signals not yet aborted, fed by each signal's
 * one listener (errors/on-abort.ts). Undefined when one of them cannot be aborted.
 */
export function abortedWithAll(signals: ReadonlyArray<CallSignal | undefined>): AbortWatch | undefined {
  if (signals.some((s) => s === undefined)) return undefined;
  const all = signals as CallSignal[];
  const left = () => all.reduce((n, s) => (s.aborted ? n : n + 1), 0);
  return {
    get aborted() { return left() === 0; },
    get reason() { return all[0].reason; },
    listen(fn) {
      const live = all.filter((s) => !s.aborted);
      let n = live.length;
      const offs = live.map((s) => s.onAbort(() => { if (--n === 0) fn(); }));
      return () => { for (const off of offs) off(); };
    },
  };
}
