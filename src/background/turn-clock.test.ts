import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { turnNow } from './turn-clock.ts';

test('the clock reads the same all through a turn of the event loop, and afresh in the next', async () => {
  const first = turnNow();
  // Time passes within the turn (a busy wait of 5 ms): the turn's reading stands.
  const until = Date.now() + 5;
  while (Date.now() < until);
  assert.equal(turnNow(), first);
  await nextTurn();
  const next = turnNow();
  assert.ok(next >= first + 5, `${next} is a reading of the next turn`);
});
