import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as turnEnd } from 'node:timers/promises';
import { TurnWrites } from './turn-writes.ts';

test('a request alone is answered at once; its turn\'s end then finds nothing held', async () => {
  const sent: string[] = [];
  const w = new TurnWrites<string>((a) => sent.push(a));
  w.begin();
  w.write('a');
  assert.deepEqual(sent, ['a'], 'written in the same tick');
  await turnEnd();
  w.begin();
  w.write('b');
  assert.deepEqual(sent, ['a', 'b'], 'the next turn starts afresh');
});

test('while other requests are in progress, answers are held to the end of the turn and leave together, in order', async () => {
  const sent: string[] = [];
  const w = new TurnWrites<string>((a) => sent.push(a));
  for (let i = 0; i < 4; i++) w.begin();
  w.write('a');
  w.write('b');
  assert.deepEqual(sent, [], 'nothing written before the turn ends');
  await turnEnd();
  assert.deepEqual(sent, ['a', 'b']);
  // Two were never written: one gives up (answered otherwise), the last is then alone and goes at once.
  w.end();
  w.write('c');
  assert.deepEqual(sent, ['a', 'b', 'c']);
});

test("after the turn's first answer, the turn's later answers wait for its end even when each is alone (cache hits)", async () => {
  const sent: string[] = [];
  const w = new TurnWrites<string>((a) => sent.push(a));
  for (const a of ['a', 'b', 'c']) {
    w.begin();
    w.write(a);
  }
  assert.deepEqual(sent, ['a'], 'the first at once, the others held');
  await turnEnd();
  assert.deepEqual(sent, ['a', 'b', 'c']);
  w.begin();
  w.write('d');
  assert.deepEqual(sent, ['a', 'b', 'c', 'd'], 'none left in progress: the next alone goes at once');
});
