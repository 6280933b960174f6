/** One message of the mail outbox. `body` is emptied once sent (it carries single-use links). */
export interface OutboxMail {
  id: string;
  to: string;
  subject: string;
  body: string;
  createdAt: string;
  nextAttemptAt: string;
  attempts: number;
  sentAt: string | null;
  lastError: string | null;
}
export type NewOutboxMail = Pick<OutboxMail, 'id' | 'to' | 'subject' | 'body' | 'createdAt'>;

/** What one attempt at a leased message came to: sent; or failed, to be tried at `nextAttemptAt`; or given up. */
export interface MailAttempt {
  sent: boolean;
  error: string | null;
  at: string;
  nextAttemptAt: string;
  /** No more attempts: the body is emptied and the message stays unsent, with its last error. */
  giveUp?: boolean;
}

/** The mail outbox: messages written with the change that causes them, sent by whichever instance leases them. */
export interface MailStore {
  enqueueMail(mail: NewOutboxMail): Promise<void>;
  /** Leases up to `limit` unsent messages due by `now` (not leased by another whose lease runs) to `owner` until `leaseUntil`. */
  claimMail(owner: string, now: string, leaseUntil: string, limit: number): Promise<OutboxMail[]>;
  /** Records an attempt at a leased message and ends the lease; sent (or given up): the body is emptied. Nothing if the lease is not `owner`'s. */
  recordMailAttempt(id: string, owner: string, attempt: MailAttempt): Promise<void>;
  /** The outbox, newest first (operators and tests look at what was written). */
  listMail(limit: number): Promise<OutboxMail[]>;
  /** Drops messages sent (or given up) before `before` (retention); answers how many. */
  pruneMail(before: string): Promise<number>;
}
