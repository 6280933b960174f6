import { EVERYONE, LATENCY_BUCKETS_MS, type UsageGroup, type UsageMinute } from '../store/usage/usage-store.ts';
import { percentileMs } from './percentile.ts';

export type Bucket = 'minute' | 'hour' | 'day';

interface Tally { requests: number; computeUnits: number; errors: number }
const tally = (): Tally => ({ requests: 0, computeUnits: 0, errors: 0 });

/** A breakdown's tally with its latency histogram, for its median and p99. */
interface Timed extends Tally { latency: number[] }
const timedTally = (): Timed => ({ ...tally(), latency: LATENCY_BUCKETS_MS.map(() => 0).concat(0) });
/** A tally as answered: its counts, and the median and p99 latency (bucket bounds, ms; null: none timed or slower than the last bound). */
const shown = ({ latency, ...t }: Timed) => ({ ...t, p50Ms: percentileMs(latency, 0.5), p99Ms: percentileMs(latency, 0.99) });

/**
 * The requests of a row that were timed: all of a call's, none of a notification's (`eth_subscription` rows count
 * notifications delivered, which nobody waited for), so latency averages are of calls only.
 */
export const timed = (r: UsageMinute) => r.latency.reduce((a, n) => a + n, 0);

/** The start of `minute`'s bucket, as the same `YYYY-MM-DDTHH:MM` text. */
export const bucketOf = (minute: string, bucket: Bucket) => (bucket === 'minute' ? minute : bucket === 'hour' ? `${minute.slice(0, 13)}:00` : `${minute.slice(0, 10)}T00:00`);

/** The key a row is shown under: its own, or for rows kept under no real key, `(revoked)` or `(other)` (not the account id). */
export const shownKey = (keyId: string) => (keyId.startsWith('(') ? keyId.slice(0, keyId.indexOf(')') + 1) : keyId);

/**
 * Usage rows folded into what the analytics API and the dashboard show: totals, a time series per bucket (empty
 * buckets included, so a chart has no gaps), breakdowns by method, key, network and outcome, and the latency
 * histogram, from the groups the database added up (`addGroups`), then `result()`.
 */
export class UsageReport {
  private readonly totals = tally();
  private readonly series = new Map<string, Tally & { latencyMsSum: number; timed: number }>();
  private readonly by = { method: new Map<string, Timed>(), key: new Map<string, Timed>(), network: new Map<string, Timed>(), code: new Map<string, Timed>(), account: new Map<string, Timed>() };
  private readonly latency = LATENCY_BUCKETS_MS.map(() => 0).concat(0);
  private latencyMsSum = 0;

  constructor(private readonly from: string, private readonly to: string, private readonly bucket: Bucket) {
    const step = bucket === 'minute' ? 60_000 : bucket === 'hour' ? 3_600_000 : 86_400_000;
    for (let t = Date.parse(`${bucketOf(from, bucket)}Z`); t < Date.parse(`${to}Z`); t += step) {
      this.series.set(new Date(t).toISOString().slice(0, 16), { ...tally(), latencyMsSum: 0, timed: 0 });
    }
  }

  /**
   * Groups the database added up (UsageStore.summarizeUsage), in place of rows: the same report. The totals and the
   * latency histogram are those of the outcome groups (every row is in exactly one of them).
   */
  addGroups(groups: readonly UsageGroup[]): void {
    const dims = { method: 'method', key: 'key', network: 'network', code: 'code', account: 'account' } as const;
    for (const g of groups) {
      if (g.by === 'minute') {
        const s = this.series.get(bucketOf(g.value, this.bucket));
        if (s) { s.requests += g.requests; s.computeUnits += g.computeUnits; s.errors += g.errors; s.latencyMsSum += g.latencyMsSum; s.timed += g.latency.reduce((a, n) => a + n, 0); }
        continue;
      }
      if (g.by === 'code') {
        this.totals.requests += g.requests;
        this.totals.computeUnits += g.computeUnits;
        this.totals.errors += g.errors;
        for (let i = 0; i < g.latency.length; i++) this.latency[i] += g.latency[i];
        this.latencyMsSum += g.latencyMsSum;
      }
      // Everyone's rows belong to no key and no account.
      if (g.value === EVERYONE && (g.by === 'key' || g.by === 'account')) continue;
      const value = g.by === 'key' ? shownKey(g.value) : g.value;
      const m = this.by[dims[g.by]];
      let t = m.get(value);
      if (!t) m.set(value, (t = timedTally()));
      t.requests += g.requests;
      t.computeUnits += g.computeUnits;
      t.errors += g.errors;
      for (let i = 0; i < g.latency.length; i++) t.latency[i] += g.latency[i];
    }
  }

  /** The accounts shown, each added up already (the top accounts of everyone's usage), in place of those of the rows. */
  setAccounts(accounts: ReadonlyArray<UsageMinute & { errors: number }>): void {
    this.by.account.clear();
    for (const a of accounts) {
      this.by.account.set(a.accountId, { requests: a.requests, computeUnits: a.computeUnits, errors: a.errors, latency: [...a.latency] });
    }
  }

  result() {
    const { from, to, bucket, totals, by } = this;
    const byRequests = (a: Tally, b: Tally) => b.requests - a.requests;
    const answered = this.latency.reduce((a, n) => a + n, 0);
    return {
      from, to, bucket, totals,
      series: [...this.series].map(([t, s]) => ({ t, requests: s.requests, computeUnits: s.computeUnits, errors: s.errors, latencyMsAvg: s.timed ? Math.round(s.latencyMsSum / s.timed) : 0 })),
      byMethod: [...by.method].map(([method, t]) => ({ method, ...shown(t) })).sort(byRequests),
      byKey: [...by.key].map(([keyId, t]) => ({ keyId, ...shown(t) })).sort(byRequests),
      byNetwork: [...by.network].map(([network, t]) => ({ network, ...shown(t) })).sort(byRequests),
      byCode: [...by.code].map(([code, t]) => ({ code: Number(code), ...shown(t) })).sort(byRequests),
      byAccount: [...by.account].map(([accountId, t]) => ({ accountId, ...shown(t) })).sort(byRequests),
      latency: {
        bucketsMs: [...LATENCY_BUCKETS_MS], counts: this.latency, avgMs: answered ? Math.round(this.latencyMsSum / answered) : 0,
        p50Ms: percentileMs(this.latency, 0.5), p99Ms: percentileMs(this.latency, 0.99),
      },
    };
  }
}
