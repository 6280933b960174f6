import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NewWebhookEvent } from '../store/webhooks/webhook-event-store.ts';
import { EventBatches } from './event-batches.ts';

const event = (id: string, bytes: number): NewWebhookEvent => ({ id, webhookId: 'w', type: 'logs', createdAt: '2026-01-01T00:00:00.000Z', body: 'x'.repeat(bytes) });

test('a block of heavy events is written a batch at a time, in order, never all held at once', async () => {
  const writes: string[][] = [];
  const store = { addWebhookEvents: async (e: readonly NewWebhookEvent[]) => { writes.push(e.map((x) => x.id)); } };
  const out = new EventBatches(store);
  await out.add(event('a', 100));
  await out.add(event('b', 100));
  assert.deepEqual(writes, [], 'small events wait for the batch');
  await out.add(event('c', 2 * 1024 * 1024)); // a heavy block's event: written with what was held
  await out.add(event('d', 2 * 1024 * 1024));
  await out.add(event('e', 100));
  await out.flush();
  assert.deepEqual(writes, [['a', 'b', 'c'], ['d'], ['e']]);
  assert.equal(out.written, 5);
});
