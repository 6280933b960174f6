import { createHash } from 'node:crypto';
import type { NewWebhookEvent, WebhookEventStore } from '../store/webhooks/webhook-event-store.ts';
import type { WebhookStore } from '../store/webhooks/webhook-store.ts';

/**
 * Writes an account-level event (kind `usage.threshold`: the usage alerts) to the outbox of each of the account's
 * webhooks of that kind that is not disabled (a paused one keeps it for its resume), and answers to how many
 * webhooks (an event already there is not written twice). `what` fixes the event's id (e.g. `quota|90|2026-11`): several instances writing the same crossing write
 * it once. Delivery then sends it like any other event; the body has the usual shape, with `network: null`.
 */
export async function writeAccountEvent(store: { webhooks: WebhookStore; webhookEvents: WebhookEventStore }, accountId: string, type: string, what: string, event: unknown, createdAt = new Date().toISOString()): Promise<number> {
  if (!accountId) throw new Error('an account event needs its account'); // listWebhooks(undefined) is everyone's
  const hooks = (await store.webhooks.listWebhooks(accountId)).filter((w) => w.kind === type && w.status !== 'disabled');
  const events: NewWebhookEvent[] = hooks.map((w) => {
    const id = `evt_${createHash('sha256').update(`${w.id}|${type}|${what}`).digest('hex').slice(0, 32)}`;
    return { id, webhookId: w.id, type, createdAt, body: JSON.stringify({ id, webhookId: w.id, type, network: w.network || null, createdAt, event }) };
  });
  await store.webhookEvents.addWebhookEvents(events);
  return events.length;
}
