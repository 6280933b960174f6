import type { Logger } from 'pino';
import { LATENCY_BUCKETS_MS, type Store, type UsageMinute } from '../store/store.ts';

/** Calls of one network, method and outcome since start. */
export interface Total { network: string; method: string; code: number; requests: number; computeUnits: number }

/** One usage row of the current minutes, in memory until the next flush. */
type Cell = Omit<UsageMinute, 'minute'>;

/** The UTC minute of `t`, `YYYY-MM-DDTHH:MM`. */
export const minuteOf = (t: number) => new Date(t).toISOString().slice(0, 16);

/**
 * Usage recording off the hot path (DECISIONS 10): each answered item adds to an in-memory cell of its minute, key,
 * network, method and outcome (a Map lookup and a few additions); every `flushMs` the cells go to the store in one
 * batch, where flushes of every instance add up. A crash loses at most `flushMs` of analytics (never of quota,
 * which is kept apart, src/limits/quota.ts). Rows older than `retentionDays` are dropped once an hour.
 */
export class UsageRecorder {
  private cells = new Map<string, Cell>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;
  /** Everything recorded since start, by network, method and outcome, folded in at each flush (for /metrics). */
  private readonly totals = new Map<string, Total>();
  /** The current minute's text and when it ends: formatted once a minute, not per call. */
  private minute = '';
  private minuteEnds = 0;

  constructor(
    private readonly store: Store,
    private readonly flushMs: number,
    private readonly retentionDays: number,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  /** One answered item. `code`: 0 for a result, else its JSON-RPC error code. */
  record(accountId: string, keyId: string, network: string, method: string, code: number, computeUnits: number, ms: number): void {
    const t = this.now();
    if (t >= this.minuteEnds || t < this.minuteEnds - 60_000) {
      this.minute = minuteOf(t);
      this.minuteEnds = Math.floor(t / 60_000) * 60_000 + 60_000;
    }
    const minute = this.minute;
    const id = `${minute}\u0000${keyId}\u0000${network}\u0000${method}\u0000${code}`;
    let c = this.cells.get(id);
    if (c === undefined) {
      c = { accountId, keyId, network, method, code, requests: 0, computeUnits: 0, latencyMsSum: 0, latency: [0, 0, 0, 0, 0, 0] };
      this.cells.set(id, c);
    }
    c.requests++;
    c.computeUnits += computeUnits;
    c.latencyMsSum += Math.round(ms);
    let b = 0;
    while (b < LATENCY_BUCKETS_MS.length && ms > LATENCY_BUCKETS_MS[b]) b++;
    c.latency[b]++;
  }

  /** Writes what was recorded so far (and waits for a flush under way): the analytics API reads after it. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  /**
   * Requests and units since start by network, method and outcome: the flushed totals plus what is still in
   * memory. /metrics reads its counters here at scrape time, so the hot path pays for one record, not two.
   */
  totalsNow(): Total[] {
    const out = new Map<string, Total>();
    const add = (id: string, t: { network: string; method: string; code: number; requests: number; computeUnits: number }) => {
      const o = out.get(id);
      if (o) { o.requests += t.requests; o.computeUnits += t.computeUnits; } else out.set(id, { network: t.network, method: t.method, code: t.code, requests: t.requests, computeUnits: t.computeUnits });
    };
    for (const [id, t] of this.totals) add(id, t);
    for (const c of this.cells.values()) add(`${c.network}\u0000${c.method}\u0000${c.code}`, c);
    return [...out.values()];
  }

  private fold(cells: Map<string, Cell>): void {
    for (const c of cells.values()) {
      const id = `${c.network}\u0000${c.method}\u0000${c.code}`;
      const t = this.totals.get(id);
      if (t) { t.requests += c.requests; t.computeUnits += c.computeUnits; } else this.totals.set(id, { network: c.network, method: c.method, code: c.code, requests: c.requests, computeUnits: c.computeUnits });
    }
  }

  private async write(): Promise<void> {
    if (this.cells.size > 0) {
      const cells = this.cells;
      this.cells = new Map();
      this.fold(cells);
      const rows: UsageMinute[] = [];
      for (const [id, c] of cells) rows.push({ minute: id.slice(0, 16), ...c });
      try {
        await this.store.addUsageMinutes(rows);
      } catch (err) {
        // Kept for the next flush: analytics are late, not lost, while the store is unreachable. (Already in the
        // totals: unfold them, or /metrics would count them twice once they are folded again.)
        for (const c of cells.values()) {
          const t = this.totals.get(`${c.network}\u0000${c.method}\u0000${c.code}`)!;
          t.requests -= c.requests;
          t.computeUnits -= c.computeUnits;
        }
        for (const [id, c] of cells) this.merge(id, c);
        this.log.warn({ err: (err as Error).message, rows: rows.length }, 'usage not written; will retry');
      }
    }
    const t = this.now();
    if (this.retentionDays > 0 && t - this.lastPrune > 3_600_000) {
      this.lastPrune = t;
      await this.store.pruneUsageMinutes(minuteOf(t - this.retentionDays * 86_400_000)).catch(() => {});
    }
  }

  private merge(id: string, c: Cell): void {
    const mine = this.cells.get(id);
    if (!mine) return void this.cells.set(id, c);
    mine.requests += c.requests;
    mine.computeUnits += c.computeUnits;
    mine.latencyMsSum += c.latencyMsSum;
    c.latency.forEach((n, i) => { mine.latency[i] += n; });
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
