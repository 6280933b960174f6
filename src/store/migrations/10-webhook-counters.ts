import type { Migration } from './migration.ts';

/**
 * The outbox in numbers without a scan (every /metrics scrape and /analytics/webhooks counted every tenant's
 * events: 2.6 s at 2 million). A row of counters per webhook, kept in the transaction of every write to webhook_events
 * (insert, attempt, prune, the cascade of a webhook's or account's deletion), filled once from the rows there; the
 * oldest waiting event of a webhook is the first entry of an index.
 *
 * SQLite keeps them by row triggers. PostgreSQL by statement triggers: one change per webhook per statement, so a
 * prune of a million rows is one update per webhook, not a million.
 */
export const webhookCounters: Migration = {
  name: 'webhook-counters',
  sqlite: `CREATE TABLE webhook_counters (
     webhook_id TEXT PRIMARY KEY REFERENCES webhooks (id) ON DELETE CASCADE,
     events INTEGER NOT NULL,
     delivered INTEGER NOT NULL,
     attempts INTEGER NOT NULL,
     delivery_ms_sum INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX webhook_events_waiting ON webhook_events (webhook_id, status, created_at);
   INSERT INTO webhook_counters (webhook_id, events, delivered, attempts, delivery_ms_sum)
     SELECT webhook_id, count(*), sum(status = 'delivered'), sum(attempts),
            coalesce(sum(CASE WHEN status = 'delivered' THEN CAST(round((julianday(delivered_at) - julianday(created_at)) * 86400000.0) AS INTEGER) END), 0)
     FROM webhook_events GROUP BY webhook_id;
   CREATE TRIGGER webhook_events_count_insert AFTER INSERT ON webhook_events BEGIN
     INSERT INTO webhook_counters (webhook_id, events, delivered, attempts, delivery_ms_sum)
       VALUES (NEW.webhook_id, 1, NEW.status = 'delivered', NEW.attempts,
               CASE WHEN NEW.status = 'delivered' THEN CAST(round((julianday(NEW.delivered_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END)
       ON CONFLICT (webhook_id) DO UPDATE SET events = events + 1, delivered = delivered + excluded.delivered,
         attempts = attempts + excluded.attempts, delivery_ms_sum = delivery_ms_sum + excluded.delivery_ms_sum;
   END;
   CREATE TRIGGER webhook_events_count_update AFTER UPDATE OF status, attempts, delivered_at, created_at ON webhook_events BEGIN
     UPDATE webhook_counters SET delivered = delivered + (NEW.status = 'delivered') - (OLD.status = 'delivered'),
       attempts = attempts + NEW.attempts - OLD.attempts,
       delivery_ms_sum = delivery_ms_sum
         + CASE WHEN NEW.status = 'delivered' THEN CAST(round((julianday(NEW.delivered_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END
         - CASE WHEN OLD.status = 'delivered' THEN CAST(round((julianday(OLD.delivered_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END
     WHERE webhook_id = NEW.webhook_id;
   END;
   CREATE TRIGGER webhook_events_count_delete AFTER DELETE ON webhook_events BEGIN
     UPDATE webhook_counters SET events = events - 1, delivered = delivered - (OLD.status = 'delivered'), attempts = attempts - OLD.attempts,
       delivery_ms_sum = delivery_ms_sum
         - CASE WHEN OLD.status = 'delivered' THEN CAST(round((julianday(OLD.delivered_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END
     WHERE webhook_id = OLD.webhook_id;
   END;`,
  postgres: `CREATE TABLE webhook_counters (
     webhook_id text PRIMARY KEY REFERENCES webhooks (id) ON DELETE CASCADE,
     events bigint NOT NULL,
     delivered bigint NOT NULL,
     attempts bigint NOT NULL,
     delivery_ms_sum bigint NOT NULL
   );
   CREATE INDEX webhook_events_waiting ON webhook_events (webhook_id, status, created_at);
   CREATE FUNCTION webhook_delivery_ms(status text, created_at timestamptz, delivered_at timestamptz) RETURNS bigint
     LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN status = 'delivered' THEN round(extract(epoch FROM delivered_at - created_at) * 1000)::bigint ELSE 0 END $$;
   INSERT INTO webhook_counters (webhook_id, events, delivered, attempts, delivery_ms_sum)
     SELECT webhook_id, count(*), count(*) FILTER (WHERE status = 'delivered'), coalesce(sum(attempts), 0), coalesce(sum(webhook_delivery_ms(status, created_at, delivered_at)), 0)
     FROM webhook_events GROUP BY webhook_id;
   -- Rows changed by one statement, as deltas per webhook, added to its counters, locked in webhook id order (bytewise,
   -- as addWebhookEvents writes): two transactions touching the same webhooks lock their counters in the same order.
   CREATE FUNCTION webhook_counters_change() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP = 'INSERT' THEN
       INSERT INTO webhook_counters (webhook_id, events, delivered, attempts, delivery_ms_sum)
         SELECT webhook_id, count(*), count(*) FILTER (WHERE status = 'delivered'), sum(attempts), sum(webhook_delivery_ms(status, created_at, delivered_at))
         FROM new_rows GROUP BY webhook_id ORDER BY webhook_id COLLATE "C"
         ON CONFLICT (webhook_id) DO UPDATE SET events = webhook_counters.events + excluded.events, delivered = webhook_counters.delivered + excluded.delivered,
           attempts = webhook_counters.attempts + excluded.attempts, delivery_ms_sum = webhook_counters.delivery_ms_sum + excluded.delivery_ms_sum;
     ELSIF TG_OP = 'UPDATE' THEN
       WITH d AS (
         SELECT webhook_id, 0 AS events, sum(delivered) AS delivered, sum(attempts) AS attempts, sum(ms) AS ms FROM (
           SELECT webhook_id, -(status = 'delivered')::int AS delivered, -attempts AS attempts, -webhook_delivery_ms(status, created_at, delivered_at) AS ms FROM old_rows
           UNION ALL
           SELECT webhook_id, (status = 'delivered')::int, attempts, webhook_delivery_ms(status, created_at, delivered_at) FROM new_rows
         ) x GROUP BY webhook_id),
       locked AS (
         SELECT c.webhook_id FROM webhook_counters c JOIN d USING (webhook_id)
         WHERE d.delivered <> 0 OR d.attempts <> 0 OR d.ms <> 0 ORDER BY c.webhook_id COLLATE "C" FOR UPDATE OF c)
       UPDATE webhook_counters c SET delivered = c.delivered + d.delivered, attempts = c.attempts + d.attempts, delivery_ms_sum = c.delivery_ms_sum + d.ms
       FROM d JOIN locked USING (webhook_id) WHERE c.webhook_id = d.webhook_id;
     ELSE
       WITH d AS (
         SELECT webhook_id, count(*) AS events, count(*) FILTER (WHERE status = 'delivered') AS delivered, sum(attempts) AS attempts,
                sum(webhook_delivery_ms(status, created_at, delivered_at)) AS ms
         FROM old_rows GROUP BY webhook_id),
       locked AS (SELECT c.webhook_id FROM webhook_counters c JOIN d USING (webhook_id) ORDER BY c.webhook_id COLLATE "C" FOR UPDATE OF c)
       UPDATE webhook_counters c SET events = c.events - d.events, delivered = c.delivered - d.delivered, attempts = c.attempts - d.attempts,
         delivery_ms_sum = c.delivery_ms_sum - d.ms
       FROM d JOIN locked USING (webhook_id) WHERE c.webhook_id = d.webhook_id;
     END IF;
     RETURN NULL;
   END $$;
   CREATE TRIGGER webhook_events_count_insert AFTER INSERT ON webhook_events REFERENCING NEW TABLE AS new_rows
     FOR EACH STATEMENT EXECUTE FUNCTION webhook_counters_change();
   CREATE TRIGGER webhook_events_count_update AFTER UPDATE ON webhook_events REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
     FOR EACH STATEMENT EXECUTE FUNCTION webhook_counters_change();
   CREATE TRIGGER webhook_events_count_delete AFTER DELETE ON webhook_events REFERENCING OLD TABLE AS old_rows
     FOR EACH STATEMENT EXECUTE FUNCTION webhook_counters_change();`,
};
