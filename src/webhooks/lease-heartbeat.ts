import type { Logger } from 'pino';
import type { WebhookEventStore } from '../store/webhooks/webhook-event-store.ts';

/**
 * Keeps the leases of the webhook events this instance is delivering alive: a lease is short
 * (`webhooks.leaseMs`, 4 s), so the events of an instance that died go to another within that, and while an attempt
 * is in flight its lease is moved on every `webhooks.leaseRenewMs`. A long receiver time-out therefore does not make
 * the lease long: only an instance that is alive and still sending holds an event past `leaseMs`.
 *
 * Only the events held here are renewed, not every lease of the owner: an event claimed but not sent (the claim
 * raced a slot's end, or the instance was stopping) must run out, or this instance would hold it for as long as it
 * lives. A renewal that fails (the store down) is logged and tried again at the next beat; should the lease run out
 * meanwhile, another instance may send the event too (a duplicate, which receivers are told to expect), and this
 * instance's record of its attempt is then refused by the store (the lease is no longer its own).
 */
export class LeaseHeartbeat {
  /** Events in flight, by id. */
  private readonly held = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  /** The renewal under way, if any: beats do not pile up behind a slow store. */
  private beating: Promise<void> | undefined;
  /** Renewals that failed since start (for tests and logs). */
  failures = 0;

  constructor(
    private readonly webhookEvents: WebhookEventStore,
    private readonly owner: string,
    private readonly leaseMs: number,
    private readonly renewMs: number,
    private readonly log: Logger,
  ) {}

  /** The lease an event claimed now gets: until `now + leaseMs`. */
  leaseUntil(now = Date.now()): string {
    return new Date(now + this.leaseMs).toISOString();
  }

  /** An attempt at this event has begun: its lease is renewed until `release`. */
  hold(id: string): void {
    this.held.add(id);
    if (!this.timer) {
      this.timer = setInterval(() => this.beat(), this.renewMs);
      this.timer.unref();
    }
  }

  holds(id: string): boolean {
    return this.held.has(id);
  }

  /** Its attempt ended (recorded or not): no more renewals. The timer stops with the last event held. */
  release(id: string): void {
    this.held.delete(id);
    if (this.held.size === 0) this.stop();
  }

  /** Lets these events (claimed, not sent) go at once instead of when their lease runs out; failures are logged. */
  async letGo(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    try {
      await this.webhookEvents.renewWebhookLeases(this.owner, ids, new Date().toISOString());
    } catch (err) {
      this.log.warn({ err: (err as Error).message, events: ids.length }, 'webhook leases not let go; they run out after webhooks.leaseMs');
    }
  }

  private beat(): void {
    if (this.beating || this.held.size === 0) return;
    const ids = [...this.held];
    this.beating = this.webhookEvents.renewWebhookLeases(this.owner, ids, this.leaseUntil())
      .then(() => undefined, (err: Error) => {
        this.failures++;
        this.log.warn({ err: err.message, events: ids.length }, 'webhook leases not renewed; tried again in webhooks.leaseRenewMs');
      })
      .finally(() => { this.beating = undefined; });
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Stops renewing (the attempts have ended) and waits for a renewal under way. */
  async close(): Promise<void> {
    this.held.clear();
    this.stop();
    await this.beating;
  }
}
