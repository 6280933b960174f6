import { both } from './migration.ts';

/** The deliveries view shows each event's last attempt: when, how long, and the start of the receiver's answer. */
export const webhookLastAttempt = both('webhook-last-attempt', (t) => `ALTER TABLE webhook_events ADD COLUMN last_attempt_at ${t.time};
   ALTER TABLE webhook_events ADD COLUMN last_duration_ms ${t.int};
   ALTER TABLE webhook_events ADD COLUMN last_response ${t.text};`);
