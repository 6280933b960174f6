import { randomUUID } from 'node:crypto';
import type { MailStore } from '../store/mail/mail-store.ts';
import type { Logger } from 'pino';
import type { MailQueue, OutgoingMail } from './mail-queue.ts';

/**
 * The MailQueue of the gateway: a message is written to the store's outbox (so a restart loses nothing)
 * and the sender is told at once; the sender (mail/sender.ts) delivers it. Without SMTP configured nothing is
 * written (there is no one to send it), and the log says so once.
 */
export class MailOutbox implements MailQueue {
  private saidUnconfigured = false;

  constructor(private readonly mail: MailStore, readonly configured: boolean, private readonly log: Logger, private readonly written: () => void = () => {}) {}

  async enqueue(mail: OutgoingMail): Promise<void> {
    if (!this.configured) {
      if (!this.saidUnconfigured) this.log.warn('mail is not configured (mail.smtp.host): invitations, resets and alerts are not mailed');
      this.saidUnconfigured = true;
      return;
    }
    await this.mail.enqueueMail({ id: randomUUID(), to: mail.to, subject: mail.subject, body: mail.text, createdAt: new Date().toISOString() });
    this.written();
  }
}
