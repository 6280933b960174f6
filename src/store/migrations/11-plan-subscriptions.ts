import { both } from './migration.ts';

/** WebSocket subscriptions per key and per account, by plan (each is work on every block or log). */
export const planSubscriptions = both('plan-subscriptions', (t) => `ALTER TABLE plans ADD COLUMN subscriptions_per_key ${t.int} NOT NULL DEFAULT 100 CHECK (subscriptions_per_key >= 0);
   ALTER TABLE plans ADD COLUMN subscriptions_per_account ${t.int} NOT NULL DEFAULT 500 CHECK (subscriptions_per_account >= 0);`);
