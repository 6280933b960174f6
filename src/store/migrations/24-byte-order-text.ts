import type { Migration } from './migration.ts';

/**
 * Every text column of each table, as the steps before this one made them. Ids, hashes, minute and month stamps,
 * network and method names, kinds and states are compared and sorted on every write; the free text (names, bodies,
 * messages) is never sorted by, and is in byte order too so that no comparison ever mixes two collations (PostgreSQL
 * refuses `a = b` across two columns' collations).
 */
const TEXT_COLUMNS: Record<string, readonly string[]> = {
  account_tokens: ['id_hash', 'id', 'kind', 'account_id', 'member_id', 'email', 'role'],
  accounts: ['id', 'name', 'email', 'email_normalized', 'password_hash', 'status', 'role', 'plan_id'],
  alert_settings: ['account_id'],
  alerts_fired: ['account_id', 'kind', 'period'],
  api_keys: ['id', 'account_id', 'name', 'type', 'prefix', 'hash', 'created_by', 'previous_hash', 'previous_prefix'],
  mail_outbox: ['id', 'to_addr', 'subject', 'body', 'last_error', 'lease_owner'],
  members: ['id', 'account_id', 'email', 'email_normalized', 'name', 'password_hash', 'role'],
  meta: ['name', 'value'],
  plans: ['id', 'name'],
  request_log: ['account_id', 'key_id', 'network', 'method', 'message', 'cache', 'node', 'request_id', 'params'],
  sessions: ['id_hash', 'account_id', 'csrf', 'member_id'],
  usage: ['account_id', 'month'],
  usage_batches: ['id'],
  usage_days: ['minute', 'account_id', 'key_id', 'network', 'method'],
  usage_hours: ['minute', 'account_id', 'key_id', 'network', 'method'],
  usage_minutes: ['minute', 'account_id', 'key_id', 'network', 'method'],
  webhook_counters: ['webhook_id'],
  webhook_events: ['id', 'webhook_id', 'type', 'body', 'status', 'lease_owner', 'last_error', 'last_response'],
  webhooks: ['id', 'account_id', 'network', 'kind', 'url', 'options', 'secret', 'status', 'disabled_reason'],
};

/**
 * Text in byte order on PostgreSQL (`COLLATE "C"`), as SQLite keeps it (BINARY) and as JavaScript compares strings.
 * A database made with a language's collation (`en_US.UTF-8`, the default of many installs) compares text through
 * the C library's rules: every step of a B-tree over ids costs a copy and a `strcoll`, a usage flush's row a quarter
 * more of the database's CPU than in byte order and a roll-up twice as much, and a search of keys by prefix
 * (`LIKE 'abc%'`) reads its index whole (docs/performance.md, "Writes"). In byte order the same
 * comparisons are a `memcmp`. The columns keep their type: PostgreSQL rewrites no table for this, it rebuilds the
 * indexes on these columns and analyzes the tables again (docs/deployment.md, "Rolling upgrades"). SQLite is in byte
 * order already: nothing there.
 */
export const byteOrderText: Migration = {
  name: 'byte-order-text',
  sqlite: 'SELECT 1;',
  postgres: [
    ...Object.entries(TEXT_COLUMNS).map(([table, columns]) => `ALTER TABLE ${table} ${columns.map((c) => `ALTER COLUMN ${c} TYPE text COLLATE "C"`).join(', ')};`),
    // A column's type altered, PostgreSQL forgets its statistics, and autovacuum analyzes a table again only after
    // enough of its rows change: until then every plan on these columns would be made blind.
    `ANALYZE ${Object.keys(TEXT_COLUMNS).join(', ')};`,
  ].join('\n   '),
};
