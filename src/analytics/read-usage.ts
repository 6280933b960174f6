import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { UsageMinute, UsageQuery, UsageStore } from '../store/usage/usage-store.ts';

/** Rows read per page: a page takes about a millisecond, so a caller's turn waits at most that long behind one. */
const PAGE_ROWS = 500;

/** A query would read more rows than `analytics.maxRowsPerQuery` (the API answers 400). */
export class TooManyUsageRowsError extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} usage rows in this range: choose a shorter range, a larger bucket's older range, or one key or network`);
  }
}

/** A query ran past its deadline (the gate was too busy with other queries; the API answers 429). */
export class UsageReadTimeoutError extends Error {}

/**
 * The share of the event loop that analytics reads may take together (one call over 758,000 rows held
 * every caller for 9 s). Every page of every read waits its turn here; after a page that kept the event loop busy
 * for `t` ms, the next page of any read starts no sooner than `t / share` ms after the first began. What is charged
 * is the loop's busy time while the page ran (its own work and whatever else ran meanwhile), not the time the
 * database took to answer: an instance with no callers answers a report at the database's pace, one under load
 * slows its reports. Reads get slower when several run; the gateway's callers do not.
 */
export class UsageReadGate {
  private nextAt = 0;
  private tail: Promise<void> = Promise.resolve();
  constructor(readonly share = 0.25) {}

  /** Runs one page's work when its turn comes (in order of arrival), and charges the time it took. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const before = this.tail;
    let release!: () => void;
    this.tail = new Promise((r) => { release = r; });
    await before;
    try {
      const wait = this.nextAt - performance.now();
      if (wait > 0) await sleep(Math.ceil(wait));
      const elu0 = performance.eventLoopUtilization();
      try {
        return await work();
      } finally {
        const busy = performance.eventLoopUtilization(elu0).active;
        this.nextAt = performance.now() + busy * (1 / this.share - 1);
      }
    } finally {
      release();
    }
  }
}

/**
 * Counted first, up to one row past the bound, and refused before any page: a refusal found by reading cost ~200
 * pages and 100,000 rows added up for nothing, as often as a caller asked. The count waits its turn at the gate like
 * a page and is charged the same, so repeated refusals too keep to analytics' share of the event loop.
 */
async function countWithin(usage: UsageStore, q: Omit<UsageQuery, 'limit' | 'after'>, opts: ReadUsageOptions): Promise<void> {
  const counted = await opts.gate.run(() => usage.countUsageMinutes(q, opts.maxRows + 1));
  if (counted > opts.maxRows) throw new TooManyUsageRowsError(opts.maxRows);
}

/**
 * `work` on the rows of [from, to) (the database adding them up: UsageStore.summarizeUsage), within the same bound of
 * rows as a read and in one turn of the gate.
 */
export async function withinBound<T>(usage: UsageStore, q: Omit<UsageQuery, 'limit' | 'after'>, opts: ReadUsageOptions, work: () => Promise<T>): Promise<T> {
  await countWithin(usage, q, opts);
  if (performance.now() > opts.deadline) throw new UsageReadTimeoutError('analytics are busy: try again shortly');
  return opts.gate.run(work);
}

export interface ReadUsageOptions {
  maxRows: number;
  gate: UsageReadGate;
  /** performance.now() after which the read gives up. */
  deadline: number;
}

/**
 * The usage rows of [from, to), read in keyset pages through the gate and each handed to `add` as it comes (the
 * report and the CSV export fold them their own way): bounded in rows (past `maxRows`, TooManyUsageRowsError) and in
 * the event loop's time, and never holding more than one page of rows.
 */
export async function readUsageRows(usage: UsageStore, q: Omit<UsageQuery, 'limit' | 'after'>, opts: ReadUsageOptions, add: (r: UsageMinute) => void): Promise<void> {
  await countWithin(usage, q, opts);
  let read = 0;
  let after: UsageQuery['after'];
  for (;;) {
    if (performance.now() > opts.deadline) throw new UsageReadTimeoutError('analytics are busy: try again shortly');
    const limit = Math.min(PAGE_ROWS, opts.maxRows + 1 - read);
    const page = await opts.gate.run(async () => {
      const rows = await usage.listUsageMinutes({ ...q, limit, after });
      for (const r of rows) add(r);
      return rows;
    });
    read += page.length;
    // Rows flushed since the count are bounded here all the same.
    if (read > opts.maxRows) throw new TooManyUsageRowsError(opts.maxRows);
    if (page.length < limit) return;
    const last = page[page.length - 1];
    after = { minute: last.minute, keyId: last.keyId, network: last.network, method: last.method, code: last.code };
  }
}
