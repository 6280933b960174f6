import { performance } from 'node:perf_hooks';

/** Share of time the event loop was busy above which callers are taken to need it. */
const BUSY_LOOP = 0.5;
/** How often the pacer looks at the requests served and the event loop (a look covers the time since the last). */
const LOOK_MS = 100;

/**
 * Background work (blocks followed for webhooks, webhook events written, deliveries: docs/decisions.md §10) must not take
 * the gateway's time from its callers. One pacer is shared by all of it. It looks at how many requests the
 * gateway served and how busy its event loop was; while callers keep the loop more than half busy, background work
 * spends from one budget that refills at `share` of the time (a token bucket of milliseconds: each piece of work is
 * charged the time it took), and waits when the budget is spent. So all background work together takes about
 * `share` of the gateway's time while it is busy with callers, and runs at full speed when it is not.
 * bench/webhooks-drain.ts measures the effect.
 */
export class Pacer {
  private seen = 0;
  private elu = performance.eventLoopUtilization();
  private lookedAt = 0;
  private wasBusy = false;
  private tokens: number;
  private refilledAt = Date.now();

  constructor(private readonly served: () => number = () => 0, readonly share = 0.15, private readonly burstMs = 50) {
    this.tokens = burstMs;
  }

  /** Callers were served lately while the event loop was mostly busy. */
  busy(): boolean {
    const now = Date.now();
    if (now - this.lookedAt >= LOOK_MS) {
      const n = this.served();
      const elu = performance.eventLoopUtilization(this.elu);
      this.elu = performance.eventLoopUtilization();
      this.wasBusy = n !== this.seen && elu.utilization > BUSY_LOOP;
      this.seen = n;
      this.lookedAt = now;
    }
    return this.wasBusy;
  }

  /** Background work may go on now: callers do not need the time, or its share is not spent. */
  mayRun(): boolean {
    if (!this.busy()) return true;
    const now = Date.now();
    this.tokens = Math.min(this.burstMs, this.tokens + (now - this.refilledAt) * this.share);
    this.refilledAt = now;
    return this.tokens > 0;
  }

  /** Waits until background work may go on. */
  async turn(): Promise<void> {
    while (!this.mayRun()) await new Promise((r) => setTimeout(r, Math.max(LOOK_MS / 10, -this.tokens / this.share)).unref());
  }

  /**
   * A piece of background work took `ms`; charged while callers are served, at most one burst: the time is wall time,
   * and a delivery waiting seconds on a slow receiver spent little of the gateway's (it must not stall the rest).
   */
  charge(ms: number): void {
    if (this.wasBusy) this.tokens -= Math.min(ms, this.burstMs);
  }
}
