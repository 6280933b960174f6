import { both } from './migration.ts';

/**
 * Team members of an account with a role, single-use tokens (invitations, password resets; only their SHA-256
 * kept), the member a session is of, and the mail outbox (written before it is sent, like webhooks').
 */
export const teamTokensMail = both('team-tokens-mail', (t) => `CREATE TABLE members (
     id ${t.text} PRIMARY KEY,
     account_id ${t.text} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     email ${t.text} NOT NULL,
     email_normalized ${t.text} NOT NULL UNIQUE,
     name ${t.text} NOT NULL,
     password_hash ${t.text},
     role ${t.text} NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
     created_at ${t.time} NOT NULL,
     updated_at ${t.time} NOT NULL
   );
   CREATE INDEX members_account ON members (account_id);
   ALTER TABLE sessions ADD COLUMN member_id ${t.text} REFERENCES members (id) ON DELETE CASCADE;
   CREATE INDEX sessions_member ON sessions (member_id) WHERE member_id IS NOT NULL;
   CREATE TABLE account_tokens (
     id_hash ${t.text} PRIMARY KEY,
     id ${t.text} NOT NULL UNIQUE,
     kind ${t.text} NOT NULL CHECK (kind IN ('invite', 'reset')),
     account_id ${t.text} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     member_id ${t.text} REFERENCES members (id) ON DELETE CASCADE,
     email ${t.text} NOT NULL,
     role ${t.text} CHECK (role IN ('owner', 'developer', 'viewer')),
     created_at ${t.time} NOT NULL,
     expires_at ${t.time} NOT NULL,
     used_at ${t.time}
   );
   CREATE INDEX account_tokens_account ON account_tokens (account_id, kind);
   CREATE INDEX account_tokens_expiry ON account_tokens (expires_at);
   CREATE TABLE mail_outbox (
     id ${t.text} PRIMARY KEY,
     to_addr ${t.text} NOT NULL,
     subject ${t.text} NOT NULL,
     body ${t.text} NOT NULL,
     created_at ${t.time} NOT NULL,
     next_attempt_at ${t.time} NOT NULL,
     attempts ${t.int} NOT NULL DEFAULT 0,
     sent_at ${t.time},
     last_error ${t.text},
     lease_owner ${t.text},
     lease_until ${t.time}
   );
   CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL;
   CREATE INDEX mail_outbox_created ON mail_outbox (created_at);`);
