import type Database from 'better-sqlite3';

/**
 * Versioned migrations of the SQLite store, applied in order at start-up inside one transaction each
 * (`PRAGMA user_version` holds how many ran). Never edit a released migration: add the next one.
 */
const NOW = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;

export const sqliteMigrations: string[] = [
  // 1 (released in 0.1): the key store before accounts.
  `CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     prefix TEXT NOT NULL,
     hash TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   );`,

  // 2: accounts, plans, and keys that belong to an account (docs/decisions.md §6).
  // Keys made before accounts existed are already in clients' hands, and worked without limits; they keep
  // working: the migration gives them (only if there are any) one account, `legacy`, that cannot log in, on a
  // plan `legacy` as large as the largest default plan. The operator can move that account to another plan
  // and delete `legacy`. They become Standard keys without restrictions, which is what they were.
  // api_keys is rebuilt (SQLite's documented way) so account_id can be NOT NULL and a foreign key.
  // Lists are JSON text; booleans 0/1; times ISO 8601 text in UTC (`toISOString`), which sorts as it reads.
  `CREATE TABLE plans (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     cu_per_second INTEGER NOT NULL,
     cu_per_month INTEGER NOT NULL,
     max_batch_size INTEGER NOT NULL,
     debug_methods INTEGER NOT NULL CHECK (debug_methods IN (0, 1)),
     max_filters INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     email TEXT NOT NULL,
     email_normalized TEXT NOT NULL UNIQUE,
     password_hash TEXT,
     status TEXT NOT NULL CHECK (status IN ('active', 'suspended')),
     role TEXT NOT NULL CHECK (role IN ('operator', 'member')),
     plan_id TEXT NOT NULL REFERENCES plans (id),
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX accounts_plan_id ON accounts (plan_id);

   INSERT INTO plans (id, name, cu_per_second, cu_per_month, max_batch_size, debug_methods, max_filters, created_at, updated_at)
     SELECT 'legacy', 'Legacy (keys from before accounts)', 5000, 10000000000, 1000, 1, 5000, ${NOW}, ${NOW}
     WHERE EXISTS (SELECT 1 FROM api_keys);
   INSERT INTO accounts (id, name, email, email_normalized, password_hash, status, role, plan_id, created_at, updated_at)
     SELECT 'legacy', 'Keys from before accounts', 'legacy@nodegate.invalid', 'legacy@nodegate.invalid', NULL,
            'active', 'member', 'legacy', ${NOW}, ${NOW}
     WHERE EXISTS (SELECT 1 FROM api_keys);

   CREATE TABLE api_keys_v2 (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts (id),
     name TEXT NOT NULL,
     type TEXT NOT NULL CHECK (type IN ('Standard', 'Dedicated', 'Restricted')),
     permissions TEXT NOT NULL,
     prefix TEXT NOT NULL,
     hash TEXT NOT NULL UNIQUE,
     ip_allowlist TEXT NOT NULL DEFAULT '[]',
     origin_allowlist TEXT NOT NULL DEFAULT '[]',
     network_allowlist TEXT NOT NULL DEFAULT '[]',
     method_allowlist TEXT NOT NULL DEFAULT '[]',
     expires_at TEXT,
     created_at TEXT NOT NULL,
     last_used_at TEXT,
     revoked_at TEXT
   );
   INSERT INTO api_keys_v2 (id, account_id, name, type, permissions, prefix, hash, created_at, revoked_at)
     SELECT id, 'legacy', name, 'Standard', '["rpc","webhooks","analytics"]', prefix, hash, created_at, revoked_at
     FROM api_keys;
   DROP TABLE api_keys;
   ALTER TABLE api_keys_v2 RENAME TO api_keys;
   CREATE INDEX api_keys_account_id ON api_keys (account_id);`,

  // 3: compute units used per account and calendar month (UTC), for the monthly quota (docs/decisions.md §7). One row
  // per account and month, added to by periodic flushes; INTEGER is 64-bit, so billions of units fit.
  `CREATE TABLE usage (
     account_id TEXT NOT NULL REFERENCES accounts (id),
     month TEXT NOT NULL CHECK (month GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]' AND substr(month, 6) BETWEEN '01' AND '12'),
     compute_units INTEGER NOT NULL,
     PRIMARY KEY (account_id, month)
   ) WITHOUT ROWID;`,

  // 4: keys per account, by plan (an account could make thousands).
  `ALTER TABLE plans ADD COLUMN max_keys INTEGER NOT NULL DEFAULT 100 CHECK (max_keys >= 1);`,

  // 5: usage per key, network, method and outcome per minute (analytics), and dashboard sessions.
  `CREATE TABLE usage_minutes (
     minute TEXT NOT NULL,
     account_id TEXT NOT NULL,
     key_id TEXT NOT NULL,
     network TEXT NOT NULL,
     method TEXT NOT NULL,
     code INTEGER NOT NULL,
     requests INTEGER NOT NULL,
     compute_units INTEGER NOT NULL,
     latency_ms_sum INTEGER NOT NULL,
     l0 INTEGER NOT NULL, l1 INTEGER NOT NULL, l2 INTEGER NOT NULL, l3 INTEGER NOT NULL, l4 INTEGER NOT NULL, l5 INTEGER NOT NULL,
     PRIMARY KEY (minute, key_id, network, method, code)
   ) WITHOUT ROWID;
   CREATE INDEX usage_minutes_account ON usage_minutes (account_id, minute);
   CREATE TABLE sessions (
     id_hash TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     csrf TEXT NOT NULL,
     created_at TEXT NOT NULL,
     expires_at TEXT NOT NULL
   );
   CREATE INDEX sessions_account ON sessions (account_id);`,

  // 6: webhooks and their outbox of events: an event is written before it is sent, and marked when a
  // delivery was acknowledged, so a restart loses nothing and sends nothing twice that was acknowledged.
  `CREATE TABLE webhooks (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     network TEXT NOT NULL,
     kind TEXT NOT NULL,
     url TEXT NOT NULL,
     options TEXT NOT NULL,
     secret TEXT NOT NULL,
     status TEXT NOT NULL,
     disabled_reason TEXT,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX webhooks_account ON webhooks (account_id);
   CREATE TABLE webhook_events (
     id TEXT PRIMARY KEY,
     webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
     seq INTEGER NOT NULL,
     type TEXT NOT NULL,
     body TEXT NOT NULL,
     created_at TEXT NOT NULL,
     status TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at TEXT NOT NULL,
     lease_owner TEXT,
     lease_until TEXT,
     last_status INTEGER,
     last_error TEXT,
     delivered_at TEXT,
     UNIQUE (webhook_id, seq)
   );
   CREATE INDEX webhook_events_due ON webhook_events (status, next_attempt_at);`,

  // 7: each webhook's oldest pending event found by index (a claim looks at one event per webhook, not at the backlog).
  `CREATE INDEX webhook_events_head ON webhook_events (webhook_id, status, seq);`,

  // 8: analytics read an account's rows in pages, in row order, by index (the old index sorted only by
  // minute); retention finds what it prunes by index: revoked keys, expired sessions, webhook test events.
  `CREATE INDEX usage_minutes_account_rows ON usage_minutes (account_id, minute, key_id, network, method, code);
   DROP INDEX usage_minutes_account;
   CREATE INDEX api_keys_revoked ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL;
   CREATE INDEX sessions_expiry ON sessions (expires_at);
   CREATE INDEX webhook_events_test ON webhook_events (created_at) WHERE type = 'webhook.test';`,

  // 9: webhooks per account, by plan (250 were made in 29 s, each one work on every block).
  `ALTER TABLE plans ADD COLUMN max_webhooks INTEGER NOT NULL DEFAULT 20 CHECK (max_webhooks >= 0);`,

  // 10: the outbox in numbers without a scan (every /metrics scrape and /analytics/webhooks counted every
  // tenant's events: 2.6 s at 2 million). A row of counters per webhook, kept by triggers in the transaction of every
  // write to webhook_events (insert, attempt, prune, the cascade of a webhook's or account's deletion), filled once
  // from the rows there; the oldest waiting event of a webhook is the first entry of an index.
  `CREATE TABLE webhook_counters (
     webhook_id TEXT PRIMARY KEY REFERENCES webhooks (id) ON DELETE CASCADE,
     events INTEGER NOT NULL,
     delivered INTEGER NOT NULL,
     attempts INTEGER NOT NULL,
     delivery_ms_sum INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX webhook_events_waiting ON webhook_events (webhook_id, status, created_at);
   INSERT INTO webhook_counters (webhook_id, events, delivered, attempts, delivery_ms_sum)
     SELECT webhook_id, count(*), sum(status = 'delivered'), sum(attempts),
            coalesce(sum(CASE WHEN status = 'delivered' THEN CAST(round((julianday(delivered_at) - julianday(created_at)) * 86400000.0) AS INTEGER) END), 0)
     FROM webhook_events GROUP BY webhook_id;
   CREATE TRIGGER webhook_events_count_insert AFTER INSERT ON webhook_events BEGIN
     INSERT INTO webhook_counters (webhook_id, events, delivered, attempts, delivery_ms_sum)
       VALUES (NEW.webhook_id, 1, NEW.status = 'delivered', NEW.attempts,
               CASE WHEN NEW.status = 'delivered' THEN CAST(round((julianday(NEW.delivered_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END)
       ON CONFLICT (webhook_id) DO UPDATE SET events = events + 1, delivered = delivered + excluded.delivered,
         attempts = attempts + excluded.attempts, delivery_ms_sum = delivery_ms_sum + excluded.delivery_ms_sum;
   END;
   CREATE TRIGGER webhook_events_count_update AFTER UPDATE OF status, attempts, delivered_at, created_at ON webhook_events BEGIN
     UPDATE webhook_counters SET delivered = delivered + (NEW.status = 'delivered') - (OLD.status = 'delivered'),
       attempts = attempts + NEW.attempts - OLD.attempts,
       delivery_ms_sum = delivery_ms_sum
         + CASE WHEN NEW.status = 'delivered' THEN CAST(round((julianday(NEW.delivered_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END
         - CASE WHEN OLD.status = 'delivered' THEN CAST(round((julianday(OLD.delivered_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END
     WHERE webhook_id = NEW.webhook_id;
   END;
   CREATE TRIGGER webhook_events_count_delete AFTER DELETE ON webhook_events BEGIN
     UPDATE webhook_counters SET events = events - 1, delivered = delivered - (OLD.status = 'delivered'), attempts = attempts - OLD.attempts,
       delivery_ms_sum = delivery_ms_sum
         - CASE WHEN OLD.status = 'delivered' THEN CAST(round((julianday(OLD.delivered_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END
     WHERE webhook_id = OLD.webhook_id;
   END;`,

  // 11: WebSocket subscriptions per key and per account, by plan (each is work on every block or log).
  `ALTER TABLE plans ADD COLUMN subscriptions_per_key INTEGER NOT NULL DEFAULT 100 CHECK (subscriptions_per_key >= 0);
   ALTER TABLE plans ADD COLUMN subscriptions_per_account INTEGER NOT NULL DEFAULT 500 CHECK (subscriptions_per_account >= 0);`,

  // 12: the deliveries view shows each event's last attempt: when, how long, and the start of the receiver's answer.
  `ALTER TABLE webhook_events ADD COLUMN last_attempt_at TEXT;
   ALTER TABLE webhook_events ADD COLUMN last_duration_ms INTEGER;
   ALTER TABLE webhook_events ADD COLUMN last_response TEXT;`,

  // 13: team members of an account with a role, single-use tokens (invitations, password resets; only
  // their SHA-256 kept), the member a session is of, and the mail outbox (written before it is sent, like webhooks').
  `CREATE TABLE members (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     email TEXT NOT NULL,
     email_normalized TEXT NOT NULL UNIQUE,
     name TEXT NOT NULL,
     password_hash TEXT,
     role TEXT NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX members_account ON members (account_id);
   ALTER TABLE sessions ADD COLUMN member_id TEXT REFERENCES members (id) ON DELETE CASCADE;
   CREATE INDEX sessions_member ON sessions (member_id) WHERE member_id IS NOT NULL;
   CREATE TABLE account_tokens (
     id_hash TEXT PRIMARY KEY,
     id TEXT NOT NULL UNIQUE,
     kind TEXT NOT NULL CHECK (kind IN ('invite', 'reset')),
     account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     member_id TEXT REFERENCES members (id) ON DELETE CASCADE,
     email TEXT NOT NULL,
     role TEXT CHECK (role IN ('owner', 'developer', 'viewer')),
     created_at TEXT NOT NULL,
     expires_at TEXT NOT NULL,
     used_at TEXT
   );
   CREATE INDEX account_tokens_account ON account_tokens (account_id, kind);
   CREATE INDEX account_tokens_expiry ON account_tokens (expires_at);
   CREATE TABLE mail_outbox (
     id TEXT PRIMARY KEY,
     to_addr TEXT NOT NULL,
     subject TEXT NOT NULL,
     body TEXT NOT NULL,
     created_at TEXT NOT NULL,
     next_attempt_at TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     sent_at TEXT,
     last_error TEXT,
     lease_owner TEXT,
     lease_until TEXT
   );
   CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL;
   CREATE INDEX mail_outbox_created ON mail_outbox (created_at);`,

  // 14: alert settings per account, and the alerts that fired (one row per crossing: its primary key is what
  // makes several instances send an alert once).
  `CREATE TABLE alert_settings (
     account_id TEXT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
     settings TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE TABLE alerts_fired (
     account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     kind TEXT NOT NULL,
     threshold REAL NOT NULL,
     period TEXT NOT NULL,
     fired_at TEXT NOT NULL,
     value REAL NOT NULL,
     PRIMARY KEY (account_id, kind, threshold, period)
   );
   CREATE INDEX alerts_fired_recent ON alerts_fired (account_id, fired_at);`,
  // The ids of the usage batches applied, so that a batch sent again is not counted twice (see postgres-migrations.ts).
  `CREATE TABLE usage_batches (id TEXT PRIMARY KEY, at TEXT NOT NULL);
   CREATE INDEX usage_batches_at ON usage_batches (at);`,
  // The member who made a key (no foreign key: the id stays on the revoked keys after the member is removed).
  `ALTER TABLE api_keys ADD COLUMN created_by TEXT;
   CREATE INDEX api_keys_created_by ON api_keys (created_by) WHERE created_by IS NOT NULL;`,
];

/** Brings the file's schema up to date; refuses a file from a newer Nodegate rather than guess. */
export function migrateSqlite(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > sqliteMigrations.length) {
    throw new Error(`the database is at schema version ${version}, newer than this Nodegate knows (${sqliteMigrations.length})`);
  }
  for (let v = version; v < sqliteMigrations.length; v++) {
    db.transaction(() => {
      db.exec(sqliteMigrations[v]);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
