import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PortClosing } from './port-closing.ts';

/** Whether `p` has settled by the end of this turn's microtasks. */
async function settled(p: Promise<void>): Promise<boolean> {
  let done = false;
  void p.then(() => { done = true; });
  await new Promise((r) => setImmediate(r));
  return done;
}

test('a stopping worker waits until every worker has closed its listener', async () => {
  const port = new PortClosing();
  port.begin([1, 2, 3]);
  const first = port.closed(1);
  const second = port.closed(2);
  assert.equal(await settled(first), false);
  assert.equal(await settled(second), false);
  const last = port.closed(3);
  assert.deepEqual(await Promise.all([settled(first), settled(second), settled(last)]), [true, true, true]);
});

test('a worker that exits listens no more: the others are not held for it', async () => {
  const port = new PortClosing();
  port.begin([1, 2]);
  const first = port.closed(1);
  assert.equal(await settled(first), false);
  port.gone(2);
  assert.equal(await settled(first), true);
});

test('a worker stopping while the primary serves on is answered at once', async () => {
  const port = new PortClosing();
  assert.equal(await settled(port.closed(1)), true);
});
