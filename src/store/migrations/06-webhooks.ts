import { both } from './migration.ts';

/**
 * Webhooks and their outbox of events: an event is written before it is sent, and marked when a delivery was
 * acknowledged, so a restart loses nothing and sends nothing twice that was acknowledged.
 */
export const webhooks = both('webhooks', (t) => `CREATE TABLE webhooks (
     id ${t.text} PRIMARY KEY,
     account_id ${t.text} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     network ${t.text} NOT NULL,
     kind ${t.text} NOT NULL,
     url ${t.text} NOT NULL,
     options ${t.text} NOT NULL,
     secret ${t.text} NOT NULL,
     status ${t.text} NOT NULL,
     disabled_reason ${t.text},
     created_at ${t.time} NOT NULL,
     updated_at ${t.time} NOT NULL
   );
   CREATE INDEX webhooks_account ON webhooks (account_id);
   CREATE TABLE webhook_events (
     id ${t.text} PRIMARY KEY,
     webhook_id ${t.text} NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
     seq ${t.big} NOT NULL,
     type ${t.text} NOT NULL,
     body ${t.text} NOT NULL,
     created_at ${t.time} NOT NULL,
     status ${t.text} NOT NULL,
     attempts ${t.int} NOT NULL DEFAULT 0,
     next_attempt_at ${t.time} NOT NULL,
     lease_owner ${t.text},
     lease_until ${t.time},
     last_status ${t.int},
     last_error ${t.text},
     delivered_at ${t.time},
     UNIQUE (webhook_id, seq)
   );
   CREATE INDEX webhook_events_due ON webhook_events (status, next_attempt_at);`);
