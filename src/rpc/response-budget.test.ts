import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ResponseBudget, SMALL_BYTES } from './response-budget.ts';

test("a request's answers fit its share; past it, too_large, and nothing more is counted", () => {
  const budget = new ResponseBudget(10 * SMALL_BYTES, 100 * SMALL_BYTES);
  const r = budget.forRequest();
  assert.equal(r.fit(6 * SMALL_BYTES), 'ok');
  assert.equal(r.fit(6 * SMALL_BYTES), 'too_large');
  assert.equal(r.fit(4 * SMALL_BYTES), 'ok');
  assert.equal(r.bytes, 10 * SMALL_BYTES);
  assert.equal(budget.inFlight, 9 * SMALL_BYTES, 'the first SMALL_BYTES of a request are not taken from the total');
  r.release();
  assert.equal(budget.inFlight, 0);
});

test('requests share the total: past it, busy, until another request gives its bytes back', () => {
  const budget = new ResponseBudget(8 * SMALL_BYTES, 8 * SMALL_BYTES);
  const a = budget.forRequest();
  const b = budget.forRequest();
  assert.equal(a.fit(8 * SMALL_BYTES), 'ok');
  assert.equal(b.fit(3 * SMALL_BYTES), 'busy');
  assert.equal(b.fit(SMALL_BYTES), 'ok', 'a small answer needs nothing of the total');
  a.release();
  assert.equal(b.fit(2 * SMALL_BYTES), 'ok');
  assert.equal(b.holdsTotal, true);
  b.release();
  assert.equal(budget.inFlight, 0);
});
