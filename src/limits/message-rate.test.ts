import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MessageRate } from './message-rate.ts';

test('a socket sends its burst at once; the excess is refused with -32005 message_rate; a second later its rate again', () => {
  let now = 1_000_000;
  const rate = new MessageRate(5, 10, () => now);
  const verdicts = Array.from({ length: 15 }, () => rate.take());
  assert.equal(verdicts.filter((v) => v === undefined).length, 10, 'the burst passes');
  const refused = verdicts.filter((v) => v !== undefined);
  assert.equal(refused.length, 5);
  assert.equal(refused[0]!.error.code, -32005);
  assert.equal(refused[0]!.error.data.reason, 'message_rate');
  assert.match(refused[0]!.error.message, /may send 5 messages a second \(bursts of 10\); send again in 200 ms/);
  assert.ok(refused.every((r) => !r.flood), 'five refusals of a bucket of ten: not a flood');
  now += 1000;
  const after = Array.from({ length: 6 }, () => rate.take());
  assert.equal(after.filter((v) => v === undefined).length, 5, 'a second earns five messages');
});

test('a socket that keeps sending past its refusals is told to close once they pass the same rate and burst', () => {
  const now = 1_000_000;
  const rate = new MessageRate(5, 10, () => now);
  const verdicts = Array.from({ length: 21 }, () => rate.take());
  assert.equal(verdicts.slice(10, 20).filter((v) => v?.flood === false).length, 10, 'ten refused, still open');
  assert.equal(verdicts[20]?.flood, true, 'the eleventh refusal: flooding');
});
