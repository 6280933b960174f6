import { performance } from 'node:perf_hooks'; // the global one is a getter on globalThis, called at each use

/** Something to do at a moment (`dueAt`, on `performance.now()`'s clock) unless let go first. */
export interface Due {
  dueAt: number;
  due(): void;
}

/**
 * Moments checked by one interval instead of a timer each: calls' and requests' deadlines (rpc/deadline.ts) and
 * reads' hedges (chain/hedged-read.ts) are one or more per request, and a `setTimeout` each, with the closure
 * that clears it, was a measurable share of a request (docs/performance.md, "Changes"). The
 * interval runs only while something is pending (as the timers it replaces, it keeps the process alive meanwhile);
 * a moment is met up to one tick late.
 */
export class CoarseClock {
  private readonly pending = new Set<Due>();
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly tickMs: number) {}

  /** Calls `d.due()` once `d.dueAt` has passed, unless `remove(d)` comes first. */
  add(d: Due): void {
    this.pending.add(d);
    if (this.timer === undefined) this.timer = setInterval(this.tick, this.tickMs);
  }

  remove(d: Due): void {
    this.pending.delete(d);
  }

  private readonly tick = (): void => {
    if (this.pending.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const now = performance.now();
    for (const d of this.pending) {
      if (d.dueAt > now) continue;
      this.pending.delete(d);
      d.due();
    }
  };
}

/** The clock deadlines and hedges share: a tick of 20 ms, nothing next to budgets of seconds or hedges of 50-500 ms. */
export const coarseClock = new CoarseClock(20);
