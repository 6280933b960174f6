import { both } from './migration.ts';

/** Each webhook's oldest pending event found by index (a claim looks at one event per webhook, not at the backlog). */
export const webhookEventsHead = both('webhook-events-head', `CREATE INDEX webhook_events_head ON webhook_events (webhook_id, status, seq);`);
