import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { Agent, buildConnector } from 'undici';
import type { Config } from '../config/schema.ts';
import type { WebhookEvent, WebhookStats, WebhookEventStore } from '../store/webhooks/webhook-event-store.ts';
import { Pacer } from '../background/pacer.ts';
import { signature } from './signature.ts';
import { addressesOf, systemResolve, type Resolve } from './target-guard.ts';
import { attemptDelivery } from './attempt.ts';
import { LeaseHeartbeat } from './lease-heartbeat.ts';
import type { WebhookStore } from '../store/webhooks/webhook-store.ts';

/** The `webhooks` configuration (docs/configuration.md), and the network as tests see it. */
export type DeliveryOptions = Omit<Config['webhooks'], 'enabled'> & {
  /** DNS answers (tests inject theirs). */
  resolve?: Resolve;
  /**
   * Told of every connection about to open, with the checked address it will use, before it opens (tests: a spy
   * that refuses anything not loopback). Throwing refuses the connection.
   */
  onConnect?: (target: { hostname: string; address: string; port: string }) => void;
  /**
   * Where a checked address is reached (tests only: a receiver on loopback stands in for a public address, so a
   * redirect from a "public" receiver can be shown refused without any packet leaving the machine).
   */
  route?: (checked: { address: string; family: number }) => { address: string; family: number };
};

/**
 * An event as delivery holds it: its body as the bytes sent, not as a string. A body can be megabytes (a block of
 * 3,000 logs of 1 KiB is 7 MB), and it is held for the whole attempt (up to webhooks.timeoutMs): held as a string it
 * outlived a young-generation collection, was promoted, and stayed in the heap until the next full collection, so
 * that the process's resident memory climbed by each body sent (about 100 MB more with two `logs` webhooks on such
 * blocks). As bytes it lives outside the JavaScript heap and the string it was read as dies young.
 */
type Outgoing = Pick<WebhookEvent, 'id' | 'webhookId' | 'createdAt' | 'attempts'> & { body: Buffer };

const outgoing = (e: WebhookEvent): Outgoing => ({ id: e.id, webhookId: e.webhookId, createdAt: e.createdAt, attempts: e.attempts, body: Buffer.from(e.body) });

/** Events leased per claim while the gateway is idle (each claim takes at most one event per webhook). */
const BATCH = 64;
/** Events per claim while the gateway is busy with callers (background/pacer.ts: claims then spend its budget). */
const BUSY_BATCH = 4;

/**
 * The delivery side of webhooks (docs/decisions.md §10): leases due events from the outbox in the store (several instances:
 * each event is leased to one), POSTs each with its signature, records the attempt. 2xx is delivered; anything
 * else (another status, a time-out, a refused target) is retried with exponential backoff and jitter until
 * `giveUpAfterMs`, then the webhook is disabled with the reason. Every connection goes to an address checked as it
 * opens (the name resolved and each answer checked, then the socket dialled to that address), so a name that
 * resolves inside at delivery time is refused then, before any socket, and cannot change between check and connect.
 *
 * Each delivery runs in its own slot (deliveries ran in rounds that waited for every one of them, so one
 * slow receiver held every other webhook): a webhook has at most one event in flight (its head, leased: in order),
 * all webhooks together at most `webhooks.concurrency`, and a slot is refilled as soon as its attempt ends, which
 * is at the latest `webhooks.timeoutMs` after it began (the whole attempt: attempt.ts). A slow receiver delays only
 * its own webhook.
 */
export class WebhookDelivery {
  private readonly owner = randomUUID();
  private readonly agent: Agent;
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  /** The claim loop, when running; `again` asks it for one more pass (a slot freed, events written meanwhile). */
  private claiming: Promise<void> | undefined;
  private again = false;
  /** Attempts in flight, by webhook id: one per webhook at most. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private stopped = false;
  private readonly resolve: Resolve;
  private readonly guard: { allowPrivate: boolean; resolve: Resolve };
  /** Renews the leases of the attempts in flight: a lease is short, and outlives an attempt only by renewals. */
  private readonly heartbeat: LeaseHeartbeat;
  /** Attempts since start, for /metrics: delivered, failed. */
  readonly counts = { delivered: 0, failed: 0 };
  /** Told of each attempt as it ends (/metrics' latency histogram). */
  attemptListener?: (delivered: boolean, seconds: number) => void;

  constructor(private readonly store: { webhooks: WebhookStore; webhookEvents: WebhookEventStore }, private readonly opts: DeliveryOptions, private readonly log: Logger, private readonly pacer = new Pacer()) {
    this.resolve = opts.resolve ?? systemResolve;
    // Not max(leaseMs, timeoutMs + margin): a long receiver time-out would make every lease long, and a
    // dead instance's events would wait that long for another. The heartbeat keeps an attempt's lease while it runs.
    this.heartbeat = new LeaseHeartbeat(store.webhookEvents, this.owner, opts.leaseMs, opts.leaseRenewMs, log);
    const guard = (this.guard = { allowPrivate: opts.allowPrivateTargets, resolve: this.resolve });
    const base = buildConnector({ timeout: opts.timeoutMs });
    this.agent = new Agent({
      connect: (o, cb) => {
        addressesOf(o.hostname, guard).then((list) => {
          const a = opts.route?.(list[0]) ?? list[0];
          opts.onConnect?.({ hostname: o.hostname, address: a.address, port: o.port });
          // Dialled by address; TLS still names (and verifies) the host the URL names.
          base({ ...o, hostname: a.address, servername: o.servername ?? (isIP(o.hostname) ? undefined : o.hostname) } as buildConnector.Options, cb);
        }).catch((err: Error) => cb(err, null));
      },
    });
  }

  start(): void {
    this.timer = setInterval(() => this.poke(), this.opts.pollMs);
    this.timer.unref();
    // Retention: delivered events older than webhooks.retentionDays leave the outbox, at start and hourly.
    if (this.opts.retentionDays > 0) {
      void this.prune();
      this.pruneTimer = setInterval(() => void this.prune(), 3_600_000);
      this.pruneTimer.unref();
    }
  }

  private async prune(): Promise<void> {
    try {
      const dropped = await this.store.webhookEvents.pruneWebhookEvents(new Date(Date.now() - this.opts.retentionDays * 86_400_000).toISOString());
      if (dropped > 0) this.log.info({ dropped, retentionDays: this.opts.retentionDays }, 'delivered webhook events past their retention dropped');
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'webhook events not pruned; next hour');
    }
  }

  /** Fills the free slots with what is due now (new events were written, a slot freed, or the timer). */
  poke(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = this.claim().finally(() => { this.claiming = undefined; });
  }

  private async claim(): Promise<void> {
    try {
      do {
        this.again = false;
        for (let free = this.opts.concurrency - this.inFlight.size; free > 0 && !this.stopped; free = this.opts.concurrency - this.inFlight.size) {
          await this.pacer.turn();
          const now = Date.now();
          const limit = Math.min(free, this.pacer.busy() ? BUSY_BATCH : BATCH);
          const due = (await this.store.webhookEvents.claimWebhookEvents(this.owner, new Date(now).toISOString(), this.heartbeat.leaseUntil(now), limit)).map(outgoing);
          this.pacer.charge(Date.now() - now);
          const notSent = due.filter((e) => !this.launch(e));
          // Claimed but not sent (stopping, or its webhook's previous attempt not yet out of its slot): let go now,
          // so that the next claim, here or on another instance, takes it without waiting for the lease to run out.
          await this.heartbeat.letGo(notSent.map((e) => e.id));
          if (due.length < limit) break;
        }
      } while (this.again && !this.stopped);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'webhook events not claimed; next poll');
    }
  }

  /**
   * Starts an event's attempt in a slot of its own; the slot refills the moment the attempt ends. False: not
   * started (the caller lets its lease go), unless it is the very event in flight.
   */
  private launch(e: Outgoing): boolean {
    // Its webhook's head is leased while in flight, so a claim cannot return a second event of it; should a lease
    // have run out meanwhile (renewals failed), the attempt in flight still records (the lease is this instance's
    // again). Between an attempt's record and its slot's end, a claim can return the webhook's next event: not sent
    // now (one in flight per webhook), let go by the caller.
    if (this.heartbeat.holds(e.id)) return true;
    if (this.stopped || this.inFlight.has(e.webhookId)) return false;
    this.heartbeat.hold(e.id);
    const run = this.deliver(e)
      .catch((err) => this.log.warn({ webhookId: e.webhookId, err: (err as Error).message }, 'webhook attempt not recorded; retried after its lease'))
      .finally(() => {
        this.heartbeat.release(e.id);
        this.inFlight.delete(e.webhookId);
        this.poke();
      });
    this.inFlight.set(e.webhookId, run);
    return true;
  }

  private async deliver(e: Outgoing): Promise<void> {
    const hook = await this.store.webhooks.getWebhook(e.webhookId);
    if (!hook) return;
    const at = new Date();
    const headers = { 'content-type': 'application/json', 'user-agent': 'Nodegate-Webhooks/1', 'nodegate-signature': signature(hook.secret, e.body, Math.floor(at.getTime() / 1000)), 'nodegate-event-id': e.id };
    const { status, error, responseBody } = await attemptDelivery(hook.url, e.body, headers, { dispatcher: this.agent, guard: this.guard, deadlineMs: this.opts.timeoutMs });
    const delivered = error === null;
    if (delivered) this.counts.delivered++;
    else this.counts.failed++;
    const durationMs = Date.now() - at.getTime();
    this.attemptListener?.(delivered, durationMs / 1000);
    const started = Date.now();
    const backoff = Math.min(3_600_000, this.opts.retryBaseMs * 2 ** e.attempts) * (0.5 + Math.random());
    await this.store.webhookEvents.recordWebhookAttempt(e.id, this.owner, { delivered, status, error, at: at.toISOString(), nextAttemptAt: new Date(at.getTime() + backoff).toISOString(), durationMs, responseBody });
    if (!delivered && at.getTime() - Date.parse(e.createdAt) > this.opts.giveUpAfterMs) {
      const reason = `an event could not be delivered for ${Math.round(this.opts.giveUpAfterMs / 3_600_000)} h: ${error}`;
      await this.store.webhooks.updateWebhook(hook.id, { status: 'disabled', disabledReason: reason });
      this.log.warn({ webhookId: hook.id, reason }, 'webhook disabled');
    }
    // The gateway's own time went into the store writes; the wait on the receiver is not its time.
    this.pacer.charge(Date.now() - started);
  }

  /** The outbox in numbers (all instances), for /metrics. */
  stats(): Promise<WebhookStats[]> {
    return this.store.webhookEvents.webhookStats();
  }

  /** Stops claiming and lets the attempts in flight end (each within webhooks.timeoutMs) and be recorded. */
  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.pruneTimer);
    await this.claiming;
    // Renewed until each attempt is recorded (which ends its lease): a graceful stop leaves no event leased.
    await Promise.all(this.inFlight.values());
    await this.heartbeat.close();
    await this.agent.close();
  }
}
