import { LATENCY_BUCKETS_MS } from '../store/usage/usage-store.ts';

/**
 * The latency under which a share `q` (0.5: the median, 0.99: p99) of the timed calls fell, read from a histogram of
 * LATENCY_BUCKETS_MS (one more count for the slower ones): the upper bound of the bucket it falls in, since rows keep
 * buckets, not times. Null when nothing was timed, or when it falls in the last bucket (slower than the last bound).
 */
export function percentileMs(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((a, n) => a + n, 0);
  if (total === 0) return null;
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i < LATENCY_BUCKETS_MS.length; i++) {
    seen += counts[i] ?? 0;
    if (seen >= rank) return LATENCY_BUCKETS_MS[i];
  }
  return null;
}
