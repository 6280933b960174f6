import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { Agent, buildConnector, request } from 'undici';
import type { Config } from '../config/schema.ts';
import type { Store, WebhookEvent, WebhookStats } from '../store/store.ts';
import { Pacer } from '../background/pacer.ts';
import { signature } from './signature.ts';
import { addressesOf, checkTarget, systemResolve, TargetRefused, type Resolve } from './target-guard.ts';

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

/** Bytes of a receiver's answer read at most (only its status matters; the rest is for the delivery log). */
const MAX_ANSWER_BYTES = 4096;
/** Events leased per claim: one per webhook at most, so this many webhooks are served at once. */
const BATCH = 64;
/** Events per round while the gateway is busy with callers (background/pacer.ts: rounds then spend its budget). */
const BUSY_BATCH = 4;
/** Redirects followed per delivery, each to a target checked as the first (http to https, a moved receiver). */
const MAX_REDIRECTS = 3;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * The delivery side of webhooks (DECISIONS 10): leases due events from the outbox in the store (several instances:
 * each event is leased to one), POSTs each with its signature, records the attempt. 2xx is delivered; anything
 * else (another status, a time-out, a refused target) is retried with exponential backoff and jitter until
 * `giveUpAfterMs`, then the webhook is disabled with the reason. A redirect is followed (up to 3, the same signed
 * POST again) only to a target that passes the same checks. Every connection goes to an address checked as it
 * opens (the name resolved and each answer checked, then the socket dialled to that address), so a name that
 * resolves inside at delivery time is refused then, before any socket, and cannot change between check and connect.
 */
export class WebhookDelivery {
  private readonly owner = randomUUID();
  private readonly agent: Agent;
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly resolve: Resolve;
  private readonly guard: { allowPrivate: boolean; resolve: Resolve };
  /** Attempts since start, for /metrics: delivered, failed. */
  readonly counts = { delivered: 0, failed: 0 };
  /** Told of each attempt as it ends (/metrics' latency histogram). */
  attemptListener?: (delivered: boolean, seconds: number) => void;

  constructor(private readonly store: Store, private readonly opts: DeliveryOptions, private readonly log: Logger, private readonly pacer = new Pacer()) {
    this.resolve = opts.resolve ?? systemResolve;
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
      const dropped = await this.store.pruneWebhookEvents(new Date(Date.now() - this.opts.retentionDays * 86_400_000).toISOString());
      if (dropped > 0) this.log.info({ dropped, retentionDays: this.opts.retentionDays }, 'delivered webhook events past their retention dropped');
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'webhook events not pruned; next hour');
    }
  }

  /** Delivers what is due now (new events were written, or the timer). One round at a time. */
  poke(): void {
    if (this.stopped || this.running) return;
    this.running = this.round().finally(() => { this.running = undefined; });
  }

  private async round(): Promise<void> {
    try {
      for (;;) {
        await this.pacer.turn();
        const now = Date.now();
        const due = await this.store.claimWebhookEvents(this.owner, new Date(now).toISOString(), new Date(now + this.opts.leaseMs).toISOString(), this.pacer.busy() ? BUSY_BATCH : BATCH);
        if (due.length === 0 || this.stopped) return;
        await Promise.all(due.map((e) => this.deliver(e)));
        this.pacer.charge(Date.now() - now);
      }
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'webhook delivery round failed; next round');
    }
  }

  private async deliver(e: WebhookEvent): Promise<void> {
    const hook = await this.store.getWebhook(e.webhookId);
    if (!hook) return;
    const at = new Date();
    let status: number | null = null;
    let error: string | null = null;
    try {
      let url = await checkTarget(hook.url, this.guard);
      const headers = { 'content-type': 'application/json', 'user-agent': 'Nodegate-Webhooks/1', 'nodegate-signature': signature(hook.secret, e.body, Math.floor(at.getTime() / 1000)), 'nodegate-event-id': e.id };
      for (let hop = 0; ; hop++) {
        const res = await request(url, { method: 'POST', dispatcher: this.agent, body: e.body, headersTimeout: this.opts.timeoutMs, bodyTimeout: this.opts.timeoutMs, headers });
        status = res.statusCode;
        let read = 0;
        for await (const chunk of res.body) {
          read += (chunk as Buffer).length;
          if (read > MAX_ANSWER_BYTES) { res.body.destroy(); break; }
        }
        const location = res.headers.location;
        if (!REDIRECTS.has(status) || typeof location !== 'string') break;
        if (hop === MAX_REDIRECTS) throw new TargetRefused(`more than ${MAX_REDIRECTS} redirects`);
        const next = new URL(location, url);
        try {
          url = await checkTarget(next.href, this.guard);
        } catch (err) {
          throw new TargetRefused(`redirected to ${next.origin}: ${(err as Error).message}`);
        }
      }
      if (status < 200 || status > 299) error = `the receiver answered HTTP ${status}`;
    } catch (err) {
      error = err instanceof TargetRefused ? err.message : `no answer: ${(err as Error & { code?: string }).code ?? (err as Error).message}`;
    }
    const delivered = error === null;
    if (delivered) this.counts.delivered++;
    else this.counts.failed++;
    this.attemptListener?.(delivered, (Date.now() - at.getTime()) / 1000);
    const backoff = Math.min(3_600_000, this.opts.retryBaseMs * 2 ** e.attempts) * (0.5 + Math.random());
    await this.store.recordWebhookAttempt(e.id, this.owner, { delivered, status, error, at: at.toISOString(), nextAttemptAt: new Date(at.getTime() + backoff).toISOString() });
    if (!delivered && at.getTime() - Date.parse(e.createdAt) > this.opts.giveUpAfterMs) {
      const reason = `an event could not be delivered for ${Math.round(this.opts.giveUpAfterMs / 3_600_000)} h: ${error}`;
      await this.store.updateWebhook(hook.id, { status: 'disabled', disabledReason: reason });
      this.log.warn({ webhookId: hook.id, reason }, 'webhook disabled');
    }
  }

  /** The outbox in numbers (all instances), for /metrics. */
  stats(): Promise<WebhookStats[]> {
    return this.store.webhookStats();
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.pruneTimer);
    await this.running;
    await this.agent.close();
  }
}
