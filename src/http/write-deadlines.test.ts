import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WriteDeadlines } from './write-deadlines.ts';

test('a write not done within the time-out is cut off; one done in time is not', async () => {
  const cut: string[] = [];
  const done = new Set<string>();
  const d = new WriteDeadlines<string>(100, (w) => done.has(w), (w) => cut.push(w));
  d.watch('slow');
  d.watch('quick');
  done.add('quick');
  await new Promise((r) => setTimeout(r, 60));
  assert.deepEqual(cut, [], 'nothing is cut before its time');
  await new Promise((r) => setTimeout(r, 120));
  assert.deepEqual(cut, ['slow']);
});
