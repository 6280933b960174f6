import { sql, type Kysely } from 'kysely';
import { timeOrNull } from '../sql/codec.ts';
import type { SqlDb } from '../sql/sql-db.ts';
import type { Tables } from '../sql/tables.ts';

/** A webhook's outbox in numbers (analytics and /metrics): its events, how many were delivered, are waiting, were tried. */
export interface WebhookStats {
  webhookId: string;
  events: number;
  delivered: number;
  /** The backlog: events not yet acknowledged. */
  pending: number;
  /** Every attempt, the successful ones included. */
  attempts: number;
  failedAttempts: number;
  /** When the oldest waiting event was written (null: none waits). */
  oldestPendingAt: string | null;
  /** Mean time from an event being written to its acknowledgement, of the delivered ones. */
  meanDeliveryMs: number | null;
}

/**
 * The read behind `webhookStats`: each webhook's row of counters (kept by the triggers of the migration that made
 * `webhook_counters`, in the transaction of every write to its events) and, of a webhook with events waiting, the
 * oldest one, the first entry of the index `webhook_events_waiting`. No other event is read, so the read costs the
 * same at any size of outbox; exported for webhook-stats.test.ts, which reads its plan on both databases.
 */
export function webhookStatsQuery(k: Kysely<Tables>, accountId?: string) {
  let q = k.selectFrom('webhook_counters as c').innerJoin('webhooks as w', 'w.id', 'c.webhook_id')
    .select((eb) => [
      'c.webhook_id', 'c.events', 'c.delivered', 'c.attempts', 'c.delivery_ms_sum',
      eb.case().when('c.events', '>', eb.ref('c.delivered')).then(
        eb.selectFrom('webhook_events as e').select('e.created_at')
          .whereRef('e.webhook_id', '=', 'c.webhook_id').where('e.status', '=', sql.lit('pending')).orderBy('e.created_at').limit(1),
      ).end().as('oldest_pending'),
    ]);
  if (accountId !== undefined) q = q.where('w.account_id', '=', accountId);
  return q.where('c.events', '>', 0).orderBy('c.webhook_id');
}

/** Each webhook's outbox in numbers (the counters' sums made means and differences), an account's only with `accountId`. */
export async function webhookStats(db: SqlDb, accountId?: string): Promise<WebhookStats[]> {
  const { codec } = db;
  return (await webhookStatsQuery(db.k, accountId).execute()).map((r) => {
    const events = codec.big(r.events);
    const delivered = codec.big(r.delivered);
    const attempts = codec.big(r.attempts);
    return {
      webhookId: r.webhook_id, events, delivered, pending: events - delivered, attempts, failedAttempts: attempts - delivered,
      oldestPendingAt: timeOrNull(codec, r.oldest_pending),
      meanDeliveryMs: delivered > 0 ? Math.round(codec.big(r.delivery_ms_sum) / delivered) : null,
    };
  });
}
