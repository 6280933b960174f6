import { sql } from 'kysely';
import { isoTime, timeOrNull, type Codec } from '../sql/codec.ts';
import { SqlDb } from '../sql/sql-db.ts';
import type { MailOutboxTable } from '../sql/tables.ts';

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

/** A message from its row. */
function mailFromRow(r: MailOutboxTable, c: Codec): OutboxMail {
  return {
    id: r.id, to: r.to_addr, subject: r.subject, body: r.body, createdAt: c.time(r.created_at), nextAttemptAt: c.time(r.next_attempt_at),
    attempts: r.attempts, sentAt: timeOrNull(c, r.sent_at), lastError: r.last_error ?? null,
  };
}

/** The mail outbox on a database. */
export function mailStore(db: SqlDb): MailStore {
  const { k, codec } = db;
  return {
    async enqueueMail(m) {
      const at = isoTime(m.createdAt);
      await k.insertInto('mail_outbox').values({ id: m.id, to_addr: m.to, subject: m.subject, body: m.body, created_at: at, next_attempt_at: at, attempts: 0 }).execute();
    },
    // One statement, so one write transaction on both (on SQLite a writing statement takes the file's write lock before
    // it reads, as BEGIN IMMEDIATE does). A message with an empty body was given up. On PostgreSQL the messages are
    // locked as they are chosen, SKIP LOCKED: an instance claiming at the same moment takes other messages instead of
    // waiting for these. The chosen ones are a MATERIALIZED CTE: chosen once, whatever plan the UPDATE gets.
    async claimMail(owner, now, leaseUntil, limit) {
      const t = isoTime(now);
      let due = k.selectFrom('mail_outbox').select('id')
        .where('sent_at', 'is', null).where('body', '<>', sql.lit('')).where('next_attempt_at', '<=', t)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', t)]))
        .orderBy('next_attempt_at').orderBy('id').limit(limit);
      if (db.dialect === 'postgres') due = due.forUpdate().skipLocked();
      const rows = await k.with((cte) => cte('due').materialized(), () => due)
        .updateTable('mail_outbox').set({ lease_owner: owner, lease_until: isoTime(leaseUntil) })
        .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
        .returningAll().execute();
      // RETURNING answers in no particular order: the claim's own.
      return rows.map((r) => mailFromRow(r, codec))
        .sort((a, b) => (a.nextAttemptAt < b.nextAttemptAt ? -1 : a.nextAttemptAt > b.nextAttemptAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },
    // The body carries single-use links: once sent or given up it is emptied, the rest kept for the operator.
    async recordMailAttempt(id, owner, a) {
      await k.updateTable('mail_outbox').set((eb) => ({
        attempts: eb('attempts', '+', 1), last_error: a.error, next_attempt_at: isoTime(a.nextAttemptAt), lease_owner: null, lease_until: null,
        ...(a.sent ? { sent_at: isoTime(a.at) } : {}),
        ...(a.sent || a.giveUp ? { body: '' } : {}),
      })).where('id', '=', id).where('lease_owner', '=', owner).execute();
    },
    async listMail(limit) {
      const rows = await k.selectFrom('mail_outbox').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map((r) => mailFromRow(r, codec));
    },
    async pruneMail(before) {
      return SqlDb.changed(await k.deleteFrom('mail_outbox').where('created_at', '<', isoTime(before))
        .where((eb) => eb.or([eb('sent_at', 'is not', null), eb('body', '=', sql.lit(''))])).executeTakeFirst());
    },
  };
}
