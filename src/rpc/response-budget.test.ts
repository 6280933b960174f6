import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ResponseBudget, SMALL_BYTES, type Holder } from './response-budget.ts';

const who = (key: string, account: string, ip: string, session?: object): Holder => ({ key: { key: { id: key }, account: { id: account } }, ip, session });
const A = who('ka', 'aa', '10.0.0.1');

test("a request's answers fit its share; past it, too_large, and nothing more is counted", () => {
  const budget = new ResponseBudget(10 * SMALL_BYTES, 100 * SMALL_BYTES, 1);
  const r = budget.forRequest(A);
  assert.equal(r.fit(6 * SMALL_BYTES), 'ok');
  assert.equal(r.fit(6 * SMALL_BYTES), 'too_large');
  assert.equal(r.fit(4 * SMALL_BYTES), 'ok');
  assert.equal(r.bytes, 10 * SMALL_BYTES);
  assert.equal(budget.inFlight, 9 * SMALL_BYTES, 'the first SMALL_BYTES of a request are not taken from the total');
  r.release();
  assert.equal(budget.inFlight, 0);
});

test('requests share the total: past it, busy, until another request gives its bytes back', () => {
  const budget = new ResponseBudget(8 * SMALL_BYTES, 8 * SMALL_BYTES, 1);
  const a = budget.forRequest(A);
  const b = budget.forRequest(who('kb', 'ab', '10.0.0.2'));
  assert.equal(a.fit(8 * SMALL_BYTES), 'ok');
  assert.equal(b.fit(3 * SMALL_BYTES), 'busy');
  assert.equal(b.fit(SMALL_BYTES), 'ok', 'a small answer needs nothing of the total');
  a.release();
  assert.equal(b.fit(2 * SMALL_BYTES), 'ok');
  assert.equal(b.holdsTotal, true);
  b.release();
  assert.equal(budget.inFlight, 0);
});

test('one key, one account or one address holds at most its share of the total; the others are served', () => {
  const budget = new ResponseBudget(8 * SMALL_BYTES, 16 * SMALL_BYTES, 0.25);
  const a = budget.forRequest(A);
  assert.equal(a.fit(5 * SMALL_BYTES), 'ok', '4 of the total: the share');
  const sameKey = budget.forRequest(A);
  assert.equal(sameKey.fit(2 * SMALL_BYTES), 'held');
  const sameAccount = budget.forRequest(who('kb', 'aa', '10.0.0.2'));
  assert.equal(sameAccount.fit(2 * SMALL_BYTES), 'held');
  const sameAddress = budget.forRequest(who('kc', 'ac', '10.0.0.1'));
  assert.equal(sameAddress.fit(2 * SMALL_BYTES), 'held');
  const other = budget.forRequest(who('kd', 'ad', '10.0.0.4'));
  assert.equal(other.fit(5 * SMALL_BYTES), 'ok');
  a.release();
  a.release();
  assert.equal(sameKey.fit(2 * SMALL_BYTES), 'ok', 'given back once, whatever the calls to release');
  sameKey.release();
  other.release();
  assert.equal(budget.inFlight, 0);
});

test('over a message transport every byte of an answer is counted', () => {
  const budget = new ResponseBudget(8 * SMALL_BYTES, 16 * SMALL_BYTES, 1);
  const r = budget.forRequest(who('ka', 'aa', '10.0.0.1', {}));
  assert.equal(r.fit(100), 'ok');
  assert.equal(budget.inFlight, 100);
  r.release();
  assert.equal(budget.inFlight, 0);
});

test('a holder refused for its share is spent until some of its bytes are given back', () => {
  const budget = new ResponseBudget(8 * SMALL_BYTES, 16 * SMALL_BYTES, 0.25);
  const a = budget.forRequest(A);
  assert.equal(a.fit(5 * SMALL_BYTES), 'ok', 'its whole share');
  assert.equal(budget.spent(budget.forRequest(A)), false, 'not refused yet');
  assert.equal(budget.forRequest(A).fit(2 * SMALL_BYTES), 'held');
  assert.equal(budget.spent(budget.forRequest(who('kb', 'ab', '10.0.0.1'))), true, 'the same address');
  assert.equal(budget.spent(budget.forRequest(who('kb', 'ab', '10.0.0.2'))), false, 'another tenant');
  a.release();
  assert.equal(budget.spent(budget.forRequest(A)), false);
});

test('an answer larger than a whole share is refused, and leaves its holder free for smaller ones', () => {
  const budget = new ResponseBudget(16 * SMALL_BYTES, 16 * SMALL_BYTES, 0.25);
  assert.equal(budget.forRequest(A).fit(8 * SMALL_BYTES), 'held');
  assert.equal(budget.spent(budget.forRequest(A)), false);
  assert.equal(budget.forRequest(A).fit(2 * SMALL_BYTES), 'ok');
});
