import { sql } from 'kysely';
import { anyOf } from '../sql/any-of.ts';
import { isoTime, timeOrNull, type Codec } from '../sql/codec.ts';
import { SqlDb } from '../sql/sql-db.ts';
import type { WebhookEventsTable } from '../sql/tables.ts';
import { webhookStats, type WebhookStats } from './webhook-stats.ts';

export type { WebhookStats } from './webhook-stats.ts';

/** One event in a webhook's outbox, with its delivery so far. */
export interface WebhookEvent {
  /** Fixed by what happened (the webhook, the kind, the block…): the same event found by two instances is one. */
  id: string;
  webhookId: string;
  /** Order of the webhook's events: delivered one at a time, in this order. */
  seq: number;
  type: string;
  /** The JSON body POSTed, exactly. */
  body: string;
  createdAt: string;
  status: 'pending' | 'delivered';
  attempts: number;
  nextAttemptAt: string;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  /** When the last attempt began (null: not tried yet). */
  lastAttemptAt: string | null;
  /** How long the last attempt took, ms (null: not tried yet, or tried before this was recorded). */
  lastDurationMs: number | null;
  /** The start of the receiver's answer to the last attempt (first 2 KB, as text; null: no answer). */
  lastResponse: string | null;
}
export type NewWebhookEvent = Pick<WebhookEvent, 'id' | 'webhookId' | 'type' | 'body' | 'createdAt'>;


/** What one delivery attempt of a leased event came to. */
export interface WebhookAttempt {
  delivered: boolean;
  status: number | null;
  error: string | null;
  at: string;
  /** When to try again (ignored when delivered). */
  nextAttemptAt: string;
  /** How long the attempt took, ms (shown in the deliveries view). */
  durationMs?: number;
  /** The start of the receiver's answer (first 2 KB, as text), null when there was none. */
  responseBody?: string | null;
}

/** The webhooks' outbox: events in order per webhook, leased to one deliverer at a time. */
export interface WebhookEventStore {
  /**
   * Appends events to their webhooks' outboxes, in the order given (each after its webhook's last). An event whose
   * id is already there is skipped: two instances finding the same event write it once.
   */
  addWebhookEvents(events: readonly NewWebhookEvent[]): Promise<void>;
  /**
   * Leases up to `limit` events due by `now` for `owner` until `leaseUntil`: of each active webhook only its oldest
   * pending event (deliveries stay in order), and none leased by another owner whose lease still runs.
   */
  claimWebhookEvents(owner: string, now: string, leaseUntil: string, limit: number): Promise<WebhookEvent[]>;
  /**
   * Moves the leases `owner` holds on these events to `leaseUntil` (the heartbeat of the attempts in flight:
   * webhooks/lease-heartbeat.ts; a time already past lets them go at once). Events no longer leased to `owner`
   * (recorded meanwhile, or taken by another after the lease ran out) are left alone. Answers how many moved.
   */
  renewWebhookLeases(owner: string, ids: readonly string[], leaseUntil: string): Promise<number>;
  /** Records an attempt at a leased event and ends the lease; nothing if the lease is no longer `owner`'s. */
  recordWebhookAttempt(id: string, owner: string, attempt: WebhookAttempt): Promise<void>;
  /** The outbox of each webhook that has events, in numbers; an account's webhooks only, with `accountId`. */
  webhookStats(accountId?: string): Promise<WebhookStats[]>;
  /** Drops events delivered before `before` (retention; events still waiting are kept); returns how many. */
  pruneWebhookEvents(before: string): Promise<number>;
  /** Drops test events (type `webhook.test`, "Send test") written before `before`, delivered or not; returns how many. */
  pruneWebhookTestEvents(before: string): Promise<number>;
  /** The events of these ids that exist (the outbox remembers what was sent, e.g. to send it again as removed). */
  getWebhookEvents(ids: readonly string[]): Promise<WebhookEvent[]>;
  /** A webhook's events, newest first. */
  listWebhookEvents(webhookId: string, limit: number): Promise<WebhookEvent[]>;
}

/** An event from its row. */
function webhookEventFromRow(r: WebhookEventsTable, c: Codec): WebhookEvent {
  return {
    id: r.id, webhookId: r.webhook_id, seq: c.big(r.seq), type: r.type, body: r.body, createdAt: c.time(r.created_at),
    status: r.status as WebhookEvent['status'], attempts: r.attempts, nextAttemptAt: c.time(r.next_attempt_at),
    lastStatus: r.last_status ?? null, lastError: r.last_error ?? null, deliveredAt: timeOrNull(c, r.delivered_at),
    lastAttemptAt: timeOrNull(c, r.last_attempt_at), lastDurationMs: r.last_duration_ms ?? null, lastResponse: r.last_response ?? null,
  };
}

/** Events in the order their webhooks' rows are locked in: by webhook id, bytewise (each webhook's keep theirs). */
const byWebhook = (a: { webhookId: string }, b: { webhookId: string }) => (a.webhookId < b.webhookId ? -1 : a.webhookId > b.webhookId ? 1 : 0);

/** The webhooks' outbox on a database. */
export function webhookEventStore(db: SqlDb): WebhookEventStore {
  const { k, codec } = db;
  const events = (rows: WebhookEventsTable[]) => rows.map((r) => webhookEventFromRow(r, codec));
  return {
    // One transaction, one statement per event: its seq is its webhook's last + 1, read and written while the
    // webhook's events cannot change under it (SQLite: the IMMEDIATE transaction holds the file's write lock;
    // PostgreSQL: the webhook's row is locked, FOR UPDATE, so two instances adding at once cannot take the same seq).
    // Events go in webhook id order, bytewise: webhook rows, and the counters their insert trigger adds to, are locked
    // in the order the counters' trigger and the prunes lock them, so concurrent writers cannot deadlock. An event of
    // a webhook that is not there selects no row; one whose id is there already does nothing.
    async addWebhookEvents(batch) {
      if (batch.length === 0) return;
      await db.write(async (q) => {
        for (const e of [...batch].sort(byWebhook)) {
          const at = isoTime(e.createdAt);
          let source = q.selectFrom('webhooks as w').where('w.id', '=', e.webhookId).select((eb) => [
            eb.val(e.id).as('id'), 'w.id as webhook_id',
            sql<number>`coalesce(${eb.selectFrom('webhook_events as p').select((p) => p.fn.max('p.seq').as('m')).whereRef('p.webhook_id', '=', 'w.id')}, 0) + 1`.as('seq'),
            eb.val(e.type).as('type'), eb.val(e.body).as('body'), eb.val(at).as('created_at'), sql.lit('pending').as('status'),
            sql.lit(0).as('attempts'), eb.val(at).as('next_attempt_at'),
          ]);
          if (db.dialect === 'postgres') source = source.forUpdate('w');
          await q.insertInto('webhook_events')
            .columns(['id', 'webhook_id', 'seq', 'type', 'body', 'created_at', 'status', 'attempts', 'next_attempt_at'])
            .expression(source).onConflict((oc) => oc.column('id').doNothing()).execute();
        }
      });
    },
    // One statement, so one write transaction on both: it leases the due heads of the active webhooks (each webhook's
    // first pending event by seq: deliveries stay in order). On SQLite a writing statement takes the file's write lock
    // before it reads, as BEGIN IMMEDIATE does. On PostgreSQL the heads are locked as they are chosen, SKIP LOCKED: an
    // instance claiming at the same moment takes other webhooks' heads instead of waiting for these. The chosen heads
    // are a MATERIALIZED CTE: chosen once, whatever plan the UPDATE gets.
    async claimWebhookEvents(owner, now, leaseUntil, limit) {
      const t = isoTime(now);
      let due = k.selectFrom('webhooks as w')
        .innerJoin('webhook_events as e', (j) => j.on((eb) => eb('e.id', '=', eb.selectFrom('webhook_events as p').select('p.id')
          .whereRef('p.webhook_id', '=', 'w.id').where('p.status', '=', sql.lit('pending')).orderBy('p.seq').limit(1))))
        .select('e.id')
        .where('w.status', '=', sql.lit('active')).where('e.next_attempt_at', '<=', t)
        .where((eb) => eb.or([eb('e.lease_until', 'is', null), eb('e.lease_until', '<=', t)]))
        .orderBy('e.next_attempt_at').orderBy('e.webhook_id').limit(limit);
      if (db.dialect === 'postgres') due = due.forUpdate('e').skipLocked();
      const rows = await k.with((cte) => cte('due').materialized(), () => due)
        .updateTable('webhook_events').set({ lease_owner: owner, lease_until: isoTime(leaseUntil) })
        .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
        .returningAll().execute();
      // RETURNING answers in no particular order: the claim's own (due first, then by webhook).
      return events(rows).sort((a, b) => (a.nextAttemptAt < b.nextAttemptAt ? -1 : a.nextAttemptAt > b.nextAttemptAt ? 1 : byWebhook(a, b)));
    },
    async renewWebhookLeases(owner, ids, leaseUntil) {
      if (ids.length === 0) return 0;
      return SqlDb.changed(await k.updateTable('webhook_events').set({ lease_until: isoTime(leaseUntil) })
        .where(anyOf(db, 'id', ids)).where('lease_owner', '=', owner).where('status', '=', sql.lit('pending')).executeTakeFirst());
    },
    async recordWebhookAttempt(id, owner, a) {
      const at = isoTime(a.at);
      await k.updateTable('webhook_events').set((eb) => ({
        attempts: eb('attempts', '+', 1), last_status: a.status, last_error: a.error, last_attempt_at: at,
        last_duration_ms: a.durationMs ?? null, last_response: a.responseBody ?? null,
        next_attempt_at: isoTime(a.nextAttemptAt), lease_owner: null, lease_until: null,
        ...(a.delivered ? { status: 'delivered', delivered_at: at } : {}),
      })).where('id', '=', id).where('lease_owner', '=', owner).execute();
    },
    webhookStats: (accountId) => webhookStats(db, accountId),
    async pruneWebhookEvents(before) {
      return SqlDb.changed(await k.deleteFrom('webhook_events').where('status', '=', sql.lit('delivered')).where('delivered_at', '<', isoTime(before)).executeTakeFirst());
    },
    // The type as a literal, not a parameter: SQLite uses the partial index `webhook_events_test` only for a query that
    // states its condition.
    async pruneWebhookTestEvents(before) {
      return SqlDb.changed(await k.deleteFrom('webhook_events').where('type', '=', sql.lit('webhook.test')).where('created_at', '<', isoTime(before)).executeTakeFirst());
    },
    async getWebhookEvents(ids) {
      if (ids.length === 0) return [];
      return events(await k.selectFrom('webhook_events').selectAll().where(anyOf(db, 'id', ids)).orderBy('webhook_id').orderBy('seq').execute());
    },
    async listWebhookEvents(webhookId, limit) {
      return events(await k.selectFrom('webhook_events').selectAll().where('webhook_id', '=', webhookId).orderBy('seq', 'desc').limit(limit).execute());
    },
  };
}
