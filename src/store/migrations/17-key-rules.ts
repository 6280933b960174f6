import type { Migration } from './migration.ts';

/** The columns of the step, with what each dialect keeps a list in (SQLite: JSON text; PostgreSQL: text[]). */
const columns = (list: string, empty: string, json: string, time: string) => `ALTER TABLE api_keys ADD COLUMN method_denylist ${list} NOT NULL DEFAULT ${empty};
   ALTER TABLE api_keys ADD COLUMN contract_allowlist ${list} NOT NULL DEFAULT ${empty};
   ALTER TABLE api_keys ADD COLUMN user_agent_allowlist ${list} NOT NULL DEFAULT ${empty};
   ALTER TABLE api_keys ADD COLUMN logs_max_block_range integer CHECK (logs_max_block_range > 0);
   ALTER TABLE api_keys ADD COLUMN jwt_keys ${json} NOT NULL DEFAULT '[]';
   ALTER TABLE api_keys ADD COLUMN jwt_audiences ${list} NOT NULL DEFAULT ${empty};
   ALTER TABLE api_keys ADD COLUMN previous_hash text;
   ALTER TABLE api_keys ADD COLUMN previous_prefix text;
   ALTER TABLE api_keys ADD COLUMN previous_until ${time};
   CREATE UNIQUE INDEX api_keys_previous_hash ON api_keys (previous_hash) WHERE previous_hash IS NOT NULL;
   CREATE INDEX api_keys_previous_until ON api_keys (previous_until) WHERE previous_until IS NOT NULL;
   CREATE INDEX api_keys_prefix ON api_keys (prefix);`;

/**
 * A key's rules as hosted providers offer them (a method denylist, contract and user-agent allowlists, its own
 * eth_getLogs range, the JWTs it requires) and its rotation: the previous value's hash, kept only for the overlap
 * (the lookup matches it until `previous_until`), found by index; the prefix indexed for revoking by prefix.
 */
export const keyRules: Migration = {
  name: 'key-rules',
  sqlite: columns('TEXT', `'[]'`, 'TEXT', 'TEXT'),
  postgres: columns('text[]', `'{}'`, 'jsonb', 'timestamptz'),
};
