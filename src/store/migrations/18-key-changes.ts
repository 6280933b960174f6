import { both } from './migration.ts';

/**
 * When a key last changed in a way its resolution reads (rules, value, revocation), so each instance asks the store
 * for what changed since its last look instead of looking every cached key up again (auth/key-changes.ts); accounts
 * and plans already have updated_at. The index of one account's keys in page order serves the keys list.
 */
export const keyChanges = both('key-changes', (t) => `ALTER TABLE api_keys ADD COLUMN changed_at ${t.time};
   CREATE INDEX api_keys_changed_at ON api_keys (changed_at) WHERE changed_at IS NOT NULL;
   CREATE INDEX accounts_updated_at ON accounts (updated_at);
   CREATE INDEX plans_updated_at ON plans (updated_at);
   CREATE INDEX api_keys_account_page ON api_keys (account_id, created_at, id);`);
