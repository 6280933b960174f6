import { both } from './migration.ts';

/**
 * Analytics read an account's rows in pages, in row order, by index (the old index sorted only by minute);
 * retention finds what it prunes by index: revoked keys, expired sessions, webhook test events.
 */
export const pagingRetentionIndexes = both('paging-retention-indexes', `CREATE INDEX usage_minutes_account_rows ON usage_minutes (account_id, minute, key_id, network, method, code);
   DROP INDEX usage_minutes_account;
   CREATE INDEX api_keys_revoked ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL;
   CREATE INDEX sessions_expiry ON sessions (expires_at);
   CREATE INDEX webhook_events_test ON webhook_events (created_at) WHERE type = 'webhook.test';`);
