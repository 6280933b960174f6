import type { Migration } from './migration.ts';

/** The channel a change to keys, accounts or plans is announced on (store/keys/change-signals.ts listens). */
export const KEY_CHANGE_CHANNEL = 'nodegate_key_changes';

/** The payload of a key's revocation: this, then the key's id. Any other change is announced with an empty payload. */
export const REVOKED_PAYLOAD = 'revoked ';

/**
 * Every writer of the store (an instance, the CLI, an operator's own SQL) announces a change that a key's resolution
 * reads, when it commits: instances that follow the changes look at once, instead of at their next poll of
 * `changesSince` (on a host short of CPU, a poll and the lookup after it take hundreds of ms). A key's revocation names the
 * key, so an instance refuses it on the word alone, with no read of a store that may be short of CPU; a revocation is
 * for ever, so the word cannot be stale. Announced by each statement that sets a key's `changed_at` (a row each) or an
 * account's or plan's `updated_at` (what `changesSince` reads); a key's last use sets neither, and costs nothing here.
 * PostgreSQL folds the same notification sent twice in one transaction into one. SQLite has no other writer to hear:
 * nothing.
 */
export const keyChangeSignal: Migration = {
  name: 'key-change-signal',
  sqlite: 'SELECT 1;',
  postgres: `CREATE FUNCTION nodegate_key_change_signal() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN PERFORM pg_notify('${KEY_CHANGE_CHANNEL}', ''); RETURN NULL; END $$;
   CREATE FUNCTION nodegate_key_row_signal() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       PERFORM pg_notify('${KEY_CHANGE_CHANNEL}',
         CASE WHEN NEW.revoked_at IS NOT NULL AND OLD.revoked_at IS NULL THEN '${REVOKED_PAYLOAD}' || NEW.id ELSE '' END);
       RETURN NULL;
     END $$;
   CREATE TRIGGER api_keys_change_signal AFTER UPDATE OF changed_at ON api_keys
     FOR EACH ROW EXECUTE FUNCTION nodegate_key_row_signal();
   CREATE TRIGGER accounts_change_signal AFTER UPDATE OF updated_at ON accounts
     FOR EACH STATEMENT EXECUTE FUNCTION nodegate_key_change_signal();
   CREATE TRIGGER plans_change_signal AFTER UPDATE OF updated_at ON plans
     FOR EACH STATEMENT EXECUTE FUNCTION nodegate_key_change_signal();`,
};
