/**
 * A histogram with one label, kept as plain numbers on the hot path and handed to prom-client only at scrape time
 * (registered as a metric: prom-client calls `get()`). prom-client's own `observe` hashes the label values on every
 * call, which cost about 2.5 % of the gateway's CPU under load (profile in docs/performance.md, analytics).
 */
export class ScrapeHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(readonly name: string, readonly help: string, private readonly label: string, private readonly buckets: readonly number[]) {}

  /** The series of one label value (callers keep it: a lookup per call is what this class avoids). */
  of(value: string): Series {
    let s = this.series.get(value);
    if (!s) this.series.set(value, (s = new Series(this.buckets)));
    return s;
  }

  /** prom-client's metric shape: cumulative `_bucket` lines with `le`, then `_sum` and `_count`, per label value. */
  async get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const [v, s] of this.series) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i];
        values.push({ labels: { [this.label]: v, le }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { [this.label]: v, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { [this.label]: v }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { [this.label]: v }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

export class Series {
  /** Observations per bucket (not cumulative); those above the last bound count only in `count`. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly buckets: readonly number[]) {
    this.counts = new Float64Array(buckets.length);
  }

  observe(v: number): void {
    const b = this.buckets;
    let i = 0;
    while (i < b.length && v > b[i]) i++;
    if (i < b.length) this.counts[i]++;
    this.sum += v;
    this.count++;
  }
}
