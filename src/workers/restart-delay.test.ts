import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestartDelay, STABLE_RUN_MS } from './restart-delay.ts';

test('a worker that keeps crashing at start waits longer each time, up to 5 s', () => {
  let t = 0;
  const d = new RestartDelay(() => t);
  const waits: number[] = [];
  d.started(0);
  for (let i = 0; i < 7; i++) {
    t += 100;
    const w = d.exited(0);
    waits.push(w);
    t += w;
    d.started(0);
  }
  assert.deepEqual(waits, [250, 500, 1000, 2000, 4000, 5000, 5000]);
});

test('a worker that ran 30 s before it crashed is started again after the short delay', () => {
  let t = 0;
  const d = new RestartDelay(() => t);
  d.started(0);
  for (let i = 0; i < 6; i++) {
    t += 10;
    t += d.exited(0);
    d.started(0);
  }
  t += STABLE_RUN_MS;
  assert.equal(d.exited(0), 250, 'back to the first delay after a good run');
  d.started(0);
  t += 10;
  assert.equal(d.exited(0), 500, 'and doubling again if it then crashes at once');
});

test('each worker slot has its own delay', () => {
  let t = 0;
  const d = new RestartDelay(() => t);
  d.started(0);
  d.started(1);
  t += 10;
  d.exited(0);
  d.exited(0);
  assert.equal(d.exited(1), 250);
});
