import assert from 'node:assert/strict';
import { test } from 'node:test';
import { percentileMs } from './percentile.ts';

test('the median and p99 are the bounds of the buckets they fall in', () => {
  // 100 calls: 60 under 5 ms, 39 under 25 ms, 1 under 500 ms.
  const counts = [60, 39, 0, 1, 0, 0];
  assert.equal(percentileMs(counts, 0.5), 5);
  assert.equal(percentileMs(counts, 0.99), 25);
  assert.equal(percentileMs(counts, 1), 500);
});

test('nothing timed has no percentile; one in the slowest bucket has no bound', () => {
  assert.equal(percentileMs([0, 0, 0, 0, 0, 0], 0.5), null);
  assert.equal(percentileMs([0, 0, 0, 0, 0, 3], 0.5), null);
});
