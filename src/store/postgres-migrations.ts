import type pg from 'pg';

/**
 * Versioned migrations of the PostgreSQL store: migration i is version i + 1 in `schema_migrations`. Each runs in
 * its own transaction under an advisory lock (see postgres.ts). Never edit a released migration: add the next one.
 *
 * Types: times are timestamptz (read back as ISO strings); lists are text[] (`pg` answers JS arrays);
 * cu_per_month and usage.compute_units are bigint (billions of compute units exceed int4; read back as JS numbers).
 * Constraint names are the ones PostgreSQL would choose; the store only relies on the column in the violation.
 */
export const postgresMigrations: string[] = [
  // 1: the model of docs/decisions.md §6. No PostgreSQL store was released before accounts, so no legacy keys here.
  `CREATE TABLE meta (name text PRIMARY KEY, value text NOT NULL);

   CREATE TABLE plans (
     id text PRIMARY KEY,
     name text NOT NULL,
     cu_per_second integer NOT NULL,
     cu_per_month bigint NOT NULL,
     max_batch_size integer NOT NULL,
     debug_methods boolean NOT NULL,
     max_filters integer NOT NULL,
     created_at timestamptz NOT NULL,
     updated_at timestamptz NOT NULL
   );

   CREATE TABLE accounts (
     id text PRIMARY KEY,
     name text NOT NULL,
     email text NOT NULL,
     -- lower-cased by the store (the same folding as on SQLite), unique: emails are case-insensitive.
     email_normalized text NOT NULL UNIQUE,
     password_hash text,
     status text NOT NULL CHECK (status IN ('active', 'suspended')),
     role text NOT NULL CHECK (role IN ('operator', 'member')),
     plan_id text NOT NULL REFERENCES plans (id),
     created_at timestamptz NOT NULL,
     updated_at timestamptz NOT NULL
   );
   CREATE INDEX accounts_plan_id ON accounts (plan_id);

   CREATE TABLE api_keys (
     id text PRIMARY KEY,
     account_id text NOT NULL REFERENCES accounts (id),
     name text NOT NULL,
     type text NOT NULL CHECK (type IN ('Standard', 'Dedicated', 'Restricted')),
     permissions text[] NOT NULL,
     prefix text NOT NULL,
     hash text NOT NULL UNIQUE,
     ip_allowlist text[] NOT NULL DEFAULT '{}',
     origin_allowlist text[] NOT NULL DEFAULT '{}',
     network_allowlist text[] NOT NULL DEFAULT '{}',
     method_allowlist text[] NOT NULL DEFAULT '{}',
     expires_at timestamptz,
     created_at timestamptz NOT NULL,
     last_used_at timestamptz,
     revoked_at timestamptz
   );
   CREATE INDEX api_keys_account_id ON api_keys (account_id);`,

  // 2: compute units used per account and calendar month (UTC), for the monthly quota (docs/decisions.md §7). One row
  // per account and month, added to by periodic flushes of every instance.
  `CREATE TABLE usage (
     account_id text NOT NULL REFERENCES accounts (id),
     month text NOT NULL CHECK (month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
     compute_units bigint NOT NULL,
     PRIMARY KEY (account_id, month)
   );`,

  // 3: keys per account, by plan (an account could make thousands).
  `ALTER TABLE plans ADD COLUMN max_keys integer NOT NULL DEFAULT 100 CHECK (max_keys >= 1);`,

  // 4: usage per key, network, method and outcome per minute (analytics), and dashboard sessions.
  `CREATE TABLE usage_minutes (
     minute text NOT NULL,
     account_id text NOT NULL,
     key_id text NOT NULL,
     network text NOT NULL,
     method text NOT NULL,
     code integer NOT NULL,
     requests bigint NOT NULL,
     compute_units bigint NOT NULL,
     latency_ms_sum bigint NOT NULL,
     l0 bigint NOT NULL, l1 bigint NOT NULL, l2 bigint NOT NULL, l3 bigint NOT NULL, l4 bigint NOT NULL, l5 bigint NOT NULL,
     PRIMARY KEY (minute, key_id, network, method, code)
   );
   CREATE INDEX usage_minutes_account ON usage_minutes (account_id, minute);
   CREATE TABLE sessions (
     id_hash text PRIMARY KEY,
     account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     csrf text NOT NULL,
     created_at timestamptz NOT NULL,
     expires_at timestamptz NOT NULL
   );
   CREATE INDEX sessions_account ON sessions (account_id);`,

  // 5: webhooks and their outbox of events.
  `CREATE TABLE webhooks (
     id text PRIMARY KEY,
     account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     network text NOT NULL,
     kind text NOT NULL,
     url text NOT NULL,
     options text NOT NULL,
     secret text NOT NULL,
     status text NOT NULL,
     disabled_reason text,
     created_at timestamptz NOT NULL,
     updated_at timestamptz NOT NULL
   );
   CREATE INDEX webhooks_account ON webhooks (account_id);
   CREATE TABLE webhook_events (
     id text PRIMARY KEY,
     webhook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
     seq bigint NOT NULL,
     type text NOT NULL,
     body text NOT NULL,
     created_at timestamptz NOT NULL,
     status text NOT NULL,
     attempts integer NOT NULL DEFAULT 0,
     next_attempt_at timestamptz NOT NULL,
     lease_owner text,
     lease_until timestamptz,
     last_status integer,
     last_error text,
     delivered_at timestamptz,
     UNIQUE (webhook_id, seq)
   );
   CREATE INDEX webhook_events_due ON webhook_events (status, next_attempt_at);`,

  // 6: each webhook's oldest pending event found by index (a claim looks at one event per webhook, not at the backlog).
  `CREATE INDEX webhook_events_head ON webhook_events (webhook_id, status, seq);`,

  // 7: analytics read an account's rows in pages, in row order, by index (the old index sorted only by
  // minute); retention finds what it prunes by index: revoked keys, expired sessions, webhook test events.
  `CREATE INDEX usage_minutes_account_rows ON usage_minutes (account_id, minute, key_id, network, method, code);
   DROP INDEX usage_minutes_account;
   CREATE INDEX api_keys_revoked ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL;
   CREATE INDEX sessions_expiry ON sessions (expires_at);
   CREATE INDEX webhook_events_test ON webhook_events (created_at) WHERE type = 'webhook.test';`,

  // 8: webhooks per account, by plan (250 were made in 29 s, each one work on every block).
  `ALTER TABLE plans ADD COLUMN max_webhooks integer NOT NULL DEFAULT 20 CHECK (max_webhooks >= 0);`,

  // 9: the outbox in numbers without a scan (every /metrics scrape and /analytics/webhooks counted every
  // tenant's events: 2.6 s at 2 million). A row of counters per webhook, kept by statement triggers in the
  // transaction of every write to webhook_events (insert, attempt, prune, the cascade of a webhook's or account's
  // deletion): one change per webhook per statement, so a prune of a million rows is one update per webhook, not a
  // million. Filled once from the rows there. The oldest waiting event of a webhook is the first entry of an index.
  `CREATE TABLE webhook_counters (
     webhook_id text PRIMARY KEY REFERENCES webhooks (id) ON DELETE CASCADE,
     events bigint NOT NULL,
     delivered bigint NOT NULL,
     attempts bigint NOT NULL,
     delivery_ms_sum bigint NOT NULL
   );
   CREATE INDEX webhook_events_waiting ON webhook_events (webhook_id, status, created_at);
   CREATE FUNCTION webhook_delivery_ms(status text, created_at timestamptz, delivered_at timestamptz) RETURNS bigint
     LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN status = 'delivered' THEN round(extract(epoch FROM delivered_at - created_at) * 1000)::bigint ELSE 0 END $$;
   INSERT INTO webhook_counters (webhook_id, events, delivered, attempts, delivery_ms_sum)
     SELECT webhook_id, count(*), count(*) FILTER (WHERE status = 'delivered'), coalesce(sum(attempts), 0), coalesce(sum(webhook_delivery_ms(status, created_at, delivered_at)), 0)
     FROM webhook_events GROUP BY webhook_id;
   -- Rows changed by one statement, as deltas per webhook, added to its counters, locked in webhook id order (bytewise,
   -- as addWebhookEvents writes): two transactions touching the same webhooks lock their counters in the same order.
   CREATE FUNCTION webhook_counters_change() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP = 'INSERT' THEN
       INSERT INTO webhook_counters (webhook_id, events, delivered, attempts, delivery_ms_sum)
         SELECT webhook_id, count(*), count(*) FILTER (WHERE status = 'delivered'), sum(attempts), sum(webhook_delivery_ms(status, created_at, delivered_at))
         FROM new_rows GROUP BY webhook_id ORDER BY webhook_id COLLATE "C"
         ON CONFLICT (webhook_id) DO UPDATE SET events = webhook_counters.events + excluded.events, delivered = webhook_counters.delivered + excluded.delivered,
           attempts = webhook_counters.attempts + excluded.attempts, delivery_ms_sum = webhook_counters.delivery_ms_sum + excluded.delivery_ms_sum;
     ELSIF TG_OP = 'UPDATE' THEN
       WITH d AS (
         SELECT webhook_id, 0 AS events, sum(delivered) AS delivered, sum(attempts) AS attempts, sum(ms) AS ms FROM (
           SELECT webhook_id, -(status = 'delivered')::int AS delivered, -attempts AS attempts, -webhook_delivery_ms(status, created_at, delivered_at) AS ms FROM old_rows
           UNION ALL
           SELECT webhook_id, (status = 'delivered')::int, attempts, webhook_delivery_ms(status, created_at, delivered_at) FROM new_rows
         ) x GROUP BY webhook_id),
       locked AS (
         SELECT c.webhook_id FROM webhook_counters c JOIN d USING (webhook_id)
         WHERE d.delivered <> 0 OR d.attempts <> 0 OR d.ms <> 0 ORDER BY c.webhook_id COLLATE "C" FOR UPDATE OF c)
       UPDATE webhook_counters c SET delivered = c.delivered + d.delivered, attempts = c.attempts + d.attempts, delivery_ms_sum = c.delivery_ms_sum + d.ms
       FROM d JOIN locked USING (webhook_id) WHERE c.webhook_id = d.webhook_id;
     ELSE
       WITH d AS (
         SELECT webhook_id, count(*) AS events, count(*) FILTER (WHERE status = 'delivered') AS delivered, sum(attempts) AS attempts,
                sum(webhook_delivery_ms(status, created_at, delivered_at)) AS ms
         FROM old_rows GROUP BY webhook_id),
       locked AS (SELECT c.webhook_id FROM webhook_counters c JOIN d USING (webhook_id) ORDER BY c.webhook_id COLLATE "C" FOR UPDATE OF c)
       UPDATE webhook_counters c SET events = c.events - d.events, delivered = c.delivered - d.delivered, attempts = c.attempts - d.attempts,
         delivery_ms_sum = c.delivery_ms_sum - d.ms
       FROM d JOIN locked USING (webhook_id) WHERE c.webhook_id = d.webhook_id;
     END IF;
     RETURN NULL;
   END $$;
   CREATE TRIGGER webhook_events_count_insert AFTER INSERT ON webhook_events REFERENCING NEW TABLE AS new_rows
     FOR EACH STATEMENT EXECUTE FUNCTION webhook_counters_change();
   CREATE TRIGGER webhook_events_count_update AFTER UPDATE ON webhook_events REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
     FOR EACH STATEMENT EXECUTE FUNCTION webhook_counters_change();
   CREATE TRIGGER webhook_events_count_delete AFTER DELETE ON webhook_events REFERENCING OLD TABLE AS old_rows
     FOR EACH STATEMENT EXECUTE FUNCTION webhook_counters_change();`,

  // 10: WebSocket subscriptions per key and per account, by plan (each is work on every block or log).
  `ALTER TABLE plans ADD COLUMN subscriptions_per_key integer NOT NULL DEFAULT 100 CHECK (subscriptions_per_key >= 0);
   ALTER TABLE plans ADD COLUMN subscriptions_per_account integer NOT NULL DEFAULT 500 CHECK (subscriptions_per_account >= 0);`,

  // 11: the deliveries view shows each event's last attempt: when, how long, and the start of the receiver's answer.
  `ALTER TABLE webhook_events ADD COLUMN last_attempt_at timestamptz;
   ALTER TABLE webhook_events ADD COLUMN last_duration_ms integer;
   ALTER TABLE webhook_events ADD COLUMN last_response text;`,

  // 12: team members of an account with a role, single-use tokens (invitations, password resets; only
  // their SHA-256 kept), the member a session is of, and the mail outbox (written before it is sent, like webhooks').
  `CREATE TABLE members (
     id text PRIMARY KEY,
     account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     email text NOT NULL,
     email_normalized text NOT NULL UNIQUE,
     name text NOT NULL,
     password_hash text,
     role text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
     created_at timestamptz NOT NULL,
     updated_at timestamptz NOT NULL
   );
   CREATE INDEX members_account ON members (account_id);
   ALTER TABLE sessions ADD COLUMN member_id text REFERENCES members (id) ON DELETE CASCADE;
   CREATE INDEX sessions_member ON sessions (member_id) WHERE member_id IS NOT NULL;
   CREATE TABLE account_tokens (
     id_hash text PRIMARY KEY,
     id text NOT NULL UNIQUE,
     kind text NOT NULL CHECK (kind IN ('invite', 'reset')),
     account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     member_id text REFERENCES members (id) ON DELETE CASCADE,
     email text NOT NULL,
     role text CHECK (role IN ('owner', 'developer', 'viewer')),
     created_at timestamptz NOT NULL,
     expires_at timestamptz NOT NULL,
     used_at timestamptz
   );
   CREATE INDEX account_tokens_account ON account_tokens (account_id, kind);
   CREATE INDEX account_tokens_expiry ON account_tokens (expires_at);
   CREATE TABLE mail_outbox (
     id text PRIMARY KEY,
     to_addr text NOT NULL,
     subject text NOT NULL,
     body text NOT NULL,
     created_at timestamptz NOT NULL,
     next_attempt_at timestamptz NOT NULL,
     attempts integer NOT NULL DEFAULT 0,
     sent_at timestamptz,
     last_error text,
     lease_owner text,
     lease_until timestamptz
   );
   CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL;
   CREATE INDEX mail_outbox_created ON mail_outbox (created_at);`,

  // 13: alert settings per account, and the alerts that fired (one row per crossing: its primary key is what
  // makes several instances send an alert once).
  `CREATE TABLE alert_settings (
     account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
     settings jsonb NOT NULL,
     updated_at timestamptz NOT NULL
   );
   CREATE TABLE alerts_fired (
     account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     kind text NOT NULL,
     threshold double precision NOT NULL,
     period text NOT NULL,
     fired_at timestamptz NOT NULL,
     value double precision NOT NULL,
     PRIMARY KEY (account_id, kind, threshold, period)
   );
   CREATE INDEX alerts_fired_recent ON alerts_fired (account_id, fired_at);`,
  // Issue 23 (a usage write that timed out but committed, then retried): the ids of the usage batches applied, so
  // that a batch sent again is not counted twice; kept a day, far longer than any retry.
  `CREATE TABLE usage_batches (id text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now());
   CREATE INDEX usage_batches_at ON usage_batches (at);`,
  // The member who made a key (no foreign key: the id stays on the revoked keys after the member is removed).
  `ALTER TABLE api_keys ADD COLUMN created_by text;
   CREATE INDEX api_keys_created_by ON api_keys (created_by) WHERE created_by IS NOT NULL;`,
];

/** Serialises migrations across instances starting at once (advisory locks are per database). 'NGST'. */
const MIGRATION_LOCK = 0x4e475354;

/**
 * Applies pending migrations, each in its own transaction holding a transaction-scoped advisory lock, so
 * instances starting together apply each migration exactly once; the lock also covers creating
 * `schema_migrations` (concurrent CREATE TABLE IF NOT EXISTS can fail).
 */
export async function migratePostgres(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    for (let version = 1; version <= postgresMigrations.length; version++) {
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
        await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
        const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
        const applied = rows[0].v ?? 0;
        if (applied > postgresMigrations.length) {
          throw new Error(`the database is at schema version ${applied}, newer than this Nodegate knows (${postgresMigrations.length})`);
        }
        if (applied < version) {
          await client.query(postgresMigrations[version - 1]);
          await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {}); // the original error is the one to report
        throw err;
      }
    }
  } finally {
    client.release();
  }
}
