import { both } from './migration.ts';

/** The member who made a key (no foreign key: the id stays on the revoked keys after the member is removed). */
export const keyCreatedBy = both('key-created-by', (t) => `ALTER TABLE api_keys ADD COLUMN created_by ${t.text};
   CREATE INDEX api_keys_created_by ON api_keys (created_by) WHERE created_by IS NOT NULL;`);
