/**
 * A signal that aborts once every one of `signals` has: a node request carrying several calls (one upstream batch)
 * is aborted only when none of them still waits for it. Undefined when one of them cannot be aborted.
 */
export function abortedWithAll(signals: ReadonlyArray<AbortSignal | undefined>): AbortSignal | undefined {
  if (signals.some((s) => s === undefined)) return undefined;
  const all = new AbortController();
  let left = signals.length;
  const one = () => {
    if (--left === 0) all.abort(signals[0]!.reason);
  };
  for (const s of signals as AbortSignal[]) {
    if (s.aborted) one();
    else s.addEventListener('abort', one, { once: true });
  }
  return all.signal;
}
