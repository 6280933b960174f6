import { both } from './migration.ts';

/** Keys per account, by plan (an account could make thousands). */
export const planMaxKeys = both('plan-max-keys', (t) => `ALTER TABLE plans ADD COLUMN max_keys ${t.int} NOT NULL DEFAULT 100 CHECK (max_keys >= 1);`);
