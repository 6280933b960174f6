import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.ts';
import type { OutboxMail, MailStore } from '../store/mail/mail-store.ts';

/** Messages one claim takes; each is sent in turn, on one SMTP connection at a time. */
const BATCH = 10;
/** Attempts before a message is given up (its body emptied, its last error kept): about a day of back-off. */
export const MAX_MAIL_ATTEMPTS = 12;

/** When to try a failed message again: 10 s doubling per attempt, at most an hour. */
export function mailBackoffMs(attempts: number): number {
  return Math.min(10_000 * 2 ** Math.max(0, attempts - 1), 3_600_000);
}

export interface MailTransport {
  send(mail: { from: string; to: string; subject: string; text: string }): Promise<void>;
  close(): void;
}

/** SMTP through nodemailer, every step bounded by `timeoutMs` (a hung server never holds the sender). */
export function smtpTransport(mail: Config['mail']): MailTransport {
  const { host, port, secure, user, password, timeoutMs } = mail.smtp;
  const transport = nodemailer.createTransport({
    host, port, secure, auth: user ? { user, pass: password ?? '' } : undefined,
    connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs, dnsTimeout: timeoutMs,
  });
  return {
    async send(m) {
      await transport.sendMail(m);
    },
    close: () => transport.close(),
  };
}

/**
 * Delivers the outbox, on every instance: a claim leases due messages to this instance (another instance
 * claiming at once takes others; a lease of an instance that died runs out and the message is taken again), each
 * is sent, and the attempt recorded: sent, its body emptied (it carried a single-use link); failed, tried again
 * after a back-off; after MAX_MAIL_ATTEMPTS given up. Runs every `pollMs` and when told a message was written.
 */
export class MailSender {
  private readonly owner = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly leaseMs: number;

  constructor(private readonly mail: MailStore, private readonly transport: MailTransport, private readonly opts: { from: string; pollMs: number; timeoutMs: number }, private readonly log: Logger) {
    // A send is connect + greeting + a few commands, each bounded by timeoutMs: the lease outlives a whole batch.
    this.leaseMs = BATCH * 6 * opts.timeoutMs;
  }

  start(): void {
    this.timer = setInterval(() => this.poke(), this.opts.pollMs);
    this.timer.unref();
    this.poke();
  }

  /** Sends what is due now (a message was written, or the timer). */
  poke(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        this.poke();
      }
    });
  }

  /** Sends what is due now and answers when done (tests; a poke that waits). */
  async flush(): Promise<void> {
    this.poke();
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        const now = Date.now();
        const batch = await this.mail.claimMail(this.owner, new Date(now).toISOString(), new Date(now + this.leaseMs).toISOString(), BATCH);
        for (const m of batch) {
          if (this.stopped) return;
          await this.attempt(m);
        }
        if (batch.length < BATCH || this.stopped) return;
      }
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'mail outbox not read; trying again');
    }
  }

  private async attempt(m: OutboxMail): Promise<void> {
    let error: string | null = null;
    try {
      await this.transport.send({ from: this.opts.from, to: m.to, subject: m.subject, text: m.body });
    } catch (err) {
      error = (err as Error).message.slice(0, 500);
    }
    const at = new Date();
    const attempts = m.attempts + 1;
    const giveUp = error !== null && attempts >= MAX_MAIL_ATTEMPTS;
    await this.mail.recordMailAttempt(m.id, this.owner, {
      sent: error === null, error, at: at.toISOString(), giveUp,
      nextAttemptAt: new Date(at.getTime() + (error === null ? 0 : mailBackoffMs(attempts))).toISOString(),
    });
    if (error === null) this.log.info({ mailId: m.id, attempts }, 'mail sent');
    else this.log.warn({ mailId: m.id, attempts, error, giveUp }, giveUp ? 'mail given up' : 'mail not sent; trying again later');
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    this.transport.close();
  }
}
