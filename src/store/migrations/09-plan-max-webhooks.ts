import { both } from './migration.ts';

/** Webhooks per account, by plan (each one is work on every block). */
export const planMaxWebhooks = both('plan-max-webhooks', (t) => `ALTER TABLE plans ADD COLUMN max_webhooks ${t.int} NOT NULL DEFAULT 20 CHECK (max_webhooks >= 0);`);
