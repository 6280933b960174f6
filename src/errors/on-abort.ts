/**
 * One `abort` listener per signal, fanning out to plain callbacks (issue 18, docs/performance.md "Issue 18: before
 * and after"). Every layer under a call (the deadline stage, the upstream's queue, its HTTP request, an upstream
 * batch) waits on the call's signal; an `addEventListener`/`removeEventListener` pair per layer per call on Node's
 * EventTarget cost half the hot path's throughput. Here a signal gets one listener, the first time anyone waits on
 * it, and a waiter is a Set entry, removed when its work ends (so nothing piles up on a long-lived signal).
 * Lives in errors/ beside CallAborted because both the rpc stages and the upstream clients use it (neither may
 * import the other's side for this).
 */
const waiters = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `fn` once when `signal` aborts (not if it already has: check `signal.aborted` first); returns what stops that. */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let set = waiters.get(signal);
  if (!set) {
    const mine = (set = new Set());
    waiters.set(signal, mine);
    signal.addEventListener('abort', () => {
      waiters.delete(signal);
      for (const w of mine) w();
    }, { once: true });
  }
  set.add(fn);
  const own = set;
  return () => void own.delete(fn);
}
