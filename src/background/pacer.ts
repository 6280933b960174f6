import { performance } from 'node:perf_hooks';

/**
 * Background work (webhook events written and delivered, blocks followed for them: DECISIONS 10) must not take the
 * gateway's time from its callers. A pacer looks at how many requests the gateway has served; if any came since its
 * last look while the event loop was mostly busy, the work that follows is done in small pieces, each followed by a rest `pause` times its length (or
 * within a budget of that share), so that it takes at most about 1 / (1 + pause) of the gateway's time. With no
 * caller, work goes at full speed. One pacer per piece of work (each keeps its own last look);
 * bench/webhooks-drain.ts measures the effect.
 */
/** Share of time the event loop was busy above which callers are taken to need it. */
const BUSY_LOOP = 0.5;

export class Pacer {
  private seen = 0;
  private elu = performance.eventLoopUtilization();

  constructor(private readonly served: () => number = () => 0, private readonly pause = 5) {}

  /**
   * Callers were served since the last look, and the event loop was busy more than half of that time: background
   * work then leaves the rest to them. A light caller on an idle gateway does not slow a drain down.
   */
  busy(): boolean {
    const n = this.served();
    const elu = performance.eventLoopUtilization(this.elu);
    this.elu = performance.eventLoopUtilization();
    const busy = n !== this.seen && elu.utilization > BUSY_LOOP;
    this.seen = n;
    return busy;
  }

  /** The share of time background work may take while callers are served. */
  get share(): number {
    return 1 / (1 + this.pause);
  }

  /** After a piece of work begun at `startedMs` (Date.now()) while busy: rests in proportion to it. */
  rest(startedMs: number): Promise<void> {
    const ms = (Date.now() - startedMs) * this.pause;
    return ms > 0 ? new Promise((r) => setTimeout(r, ms).unref()) : Promise.resolve();
  }
}
