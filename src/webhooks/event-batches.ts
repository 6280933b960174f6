import type { NewWebhookEvent, WebhookEventStore } from '../store/webhooks/webhook-event-store.ts';

/** Bytes of event bodies held before they are written (an event of a block of heavy logs is written alone). */
const WRITE_BYTES = 1024 * 1024;

/**
 * A block's events, written to the outbox in batches of about WRITE_BYTES of bodies rather than all at once: held all
 * at once, every webhook's copy of a block of 3,000 logs of 1 KiB (7 MB each) was in memory together, N webhooks on
 * one contract 7N MB. Each event's id is fixed by what happened, so a block written again after a crash between two
 * batches writes only what is missing; the producer moves where the events are written up to (store meta) only
 * after the last batch.
 */
export class EventBatches {
  private readonly held: NewWebhookEvent[] = [];
  private bytes = 0;
  /** Events written so far. */
  written = 0;

  constructor(private readonly events: Pick<WebhookEventStore, 'addWebhookEvents'>) {}

  /** Adds an event, writing what is held once it reaches WRITE_BYTES. */
  async add(e: NewWebhookEvent): Promise<void> {
    this.held.push(e);
    this.bytes += e.body.length;
    if (this.bytes >= WRITE_BYTES) await this.flush();
  }

  /** Writes what is held. */
  async flush(): Promise<void> {
    this.written += this.held.length;
    this.bytes = 0;
    await this.events.addWebhookEvents(this.held.splice(0));
  }
}
