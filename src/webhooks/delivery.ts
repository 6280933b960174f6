import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Agent, buildConnector, request } from 'undici';
import type { Config } from '../config/schema.ts';
import type { Store, WebhookEvent } from '../store/store.ts';
import { signature } from './signature.ts';
import { addressesOf, checkTarget, systemResolve, TargetRefused, type Resolve } from './target-guard.ts';

/** The `webhooks` configuration (docs/configuration.md), and the network as tests see it. */
export type DeliveryOptions = Omit<Config['webhooks'], 'enabled'> & {
  /** DNS answers (tests inject theirs). */
  resolve?: Resolve;
  /** Told of every connection about to open, before it opens (tests: a spy that refuses anything not loopback). */
  onConnect?: (target: { hostname: string; port: string }) => void;
};

/** Bytes of a receiver's answer read at most (only its status matters; the rest is for the delivery log). */
const MAX_ANSWER_BYTES = 4096;
/** Events leased per claim: one per webhook at most, so this many webhooks are served at once. */
const BATCH = 64;

/**
 * The delivery side of webhooks (DECISIONS 10): leases due events from the outbox in the store (several instances:
 * each event is leased to one), POSTs each with its signature, records the attempt. 2xx is delivered; anything
 * else (another status, a time-out, a refused target) is retried with exponential backoff and jitter until
 * `giveUpAfterMs`, then the webhook is disabled with the reason. Redirects are not followed: a receiver must answer
 * at its own URL, and a redirect could point anywhere. Every connection's address is checked as it opens (a guarded
 * DNS lookup), so a name that resolves inside at delivery time is refused then, before any socket.
 */
export class WebhookDelivery {
  private readonly owner = randomUUID();
  private readonly agent: Agent;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly resolve: Resolve;
  /** Attempts since start, for /metrics: delivered, failed, and the seconds they took. */
  readonly counts = { delivered: 0, failed: 0, seconds: 0 };

  constructor(private readonly store: Store, private readonly opts: DeliveryOptions, private readonly log: Logger) {
    this.resolve = opts.resolve ?? systemResolve;
    const guard = { allowPrivate: opts.allowPrivateTargets, resolve: this.resolve };
    const base = buildConnector({
      timeout: opts.timeoutMs,
      // Names are resolved here, each answer checked, and the connection made to the address that was checked.
      lookup: (hostname: string, _o: unknown, cb: (err: Error | null, address?: string, family?: number) => void) => {
        addressesOf(hostname, guard).then((list) => cb(null, list[0].address, list[0].family), (err) => cb(err as Error));
      },
    } as buildConnector.BuildOptions);
    this.agent = new Agent({
      connect: (o, cb) => {
        try {
          opts.onConnect?.({ hostname: o.hostname, port: o.port });
        } catch (err) {
          return cb(err as Error, null);
        }
        return base(o, cb);
      },
    });
  }

  start(): void {
    this.timer = setInterval(() => this.poke(), this.opts.pollMs);
    this.timer.unref();
  }

  /** Delivers what is due now (new events were written, or the timer). One round at a time. */
  poke(): void {
    if (this.stopped || this.running) return;
    this.running = this.round().finally(() => { this.running = undefined; });
  }

  private async round(): Promise<void> {
    try {
      for (;;) {
        const now = Date.now();
        const due = await this.store.claimWebhookEvents(this.owner, new Date(now).toISOString(), new Date(now + this.opts.leaseMs).toISOString(), BATCH);
        if (due.length === 0 || this.stopped) return;
        await Promise.all(due.map((e) => this.deliver(e)));
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
      const url = await checkTarget(hook.url, { allowPrivate: this.opts.allowPrivateTargets, resolve: this.resolve });
      const res = await request(url, {
        method: 'POST', dispatcher: this.agent, body: e.body, headersTimeout: this.opts.timeoutMs, bodyTimeout: this.opts.timeoutMs,
        headers: { 'content-type': 'application/json', 'user-agent': 'Nodegate-Webhooks/1', 'nodegate-signature': signature(hook.secret, e.body, Math.floor(at.getTime() / 1000)), 'nodegate-event-id': e.id },
      });
      status = res.statusCode;
      let read = 0;
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length;
        if (read > MAX_ANSWER_BYTES) { res.body.destroy(); break; }
      }
      if (status < 200 || status > 299) error = `the receiver answered HTTP ${status}`;
    } catch (err) {
      error = err instanceof TargetRefused ? err.message : `no answer: ${(err as Error & { code?: string }).code ?? (err as Error).message}`;
    }
    const delivered = error === null;
    if (delivered) this.counts.delivered++;
    else this.counts.failed++;
    this.counts.seconds += (Date.now() - at.getTime()) / 1000;
    const backoff = Math.min(3_600_000, this.opts.retryBaseMs * 2 ** e.attempts) * (0.5 + Math.random());
    await this.store.recordWebhookAttempt(e.id, this.owner, { delivered, status, error, at: at.toISOString(), nextAttemptAt: new Date(at.getTime() + backoff).toISOString() });
    if (!delivered && at.getTime() - Date.parse(e.createdAt) > this.opts.giveUpAfterMs) {
      const reason = `an event could not be delivered for ${Math.round(this.opts.giveUpAfterMs / 3_600_000)} h: ${error}`;
      await this.store.updateWebhook(hook.id, { status: 'disabled', disabledReason: reason });
      this.log.warn({ webhookId: hook.id, reason }, 'webhook disabled');
    }
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    await this.agent.close();
  }
}
