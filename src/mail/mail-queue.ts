/**
 * Mail the gateway sends (invitations, password resets, usage alerts): one small interface, so the senders of mail
 * never know whether SMTP is configured. The implementation writes to the store's outbox, from which a background
 * sender delivers (a restart loses nothing); without SMTP it writes nothing (docs/configuration.md, `mail`).
 */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

export interface MailQueue {
  /** Whether mail can be sent at all (SMTP configured); the API says so instead of pretending. */
  readonly configured: boolean;
  enqueue(mail: OutgoingMail): Promise<void>;
}
