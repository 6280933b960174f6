/**
 * The tables as Kysely sees them, one interface per table, the same columns on SQLite and PostgreSQL. Where the
 * two keep a value differently the column type says both (`Bool`, `List`, `Time`, `Big`, `Json`), and the store's
 * `Codec` (`sql/codec.ts`) writes and reads it.
 */
import type { Generated, Kysely, Transaction } from 'kysely';

/** The two databases the store runs on. */
export type Dialect = 'sqlite' | 'postgres';

/** 0/1 on SQLite, boolean on PostgreSQL. */
export type Bool = number | boolean;
/** JSON text on SQLite, text[] on PostgreSQL. */
export type List = string | string[];
/** ISO 8601 text on SQLite, timestamptz on PostgreSQL (written as ISO text on both). */
export type Time = string | Date;
/** bigint columns: `pg` answers them as strings. */
export type Big = number | string;
/** JSON text on SQLite, jsonb on PostgreSQL. */
export type Json = string | object;

export interface PlansTable {
  id: string;
  name: string;
  cu_per_second: number;
  cu_per_month: Big;
  max_batch_size: number;
  debug_methods: Bool;
  max_filters: number;
  max_keys: number;
  max_webhooks: number;
  subscriptions_per_key: number;
  subscriptions_per_account: number;
  request_log_hours: number;
  request_log_max: number;
  created_at: Time;
  updated_at: Time;
}

export interface AccountsTable {
  id: string;
  name: string;
  email: string;
  email_normalized: string;
  password_hash: string | null;
  status: string;
  role: string;
  plan_id: string;
  created_at: Time;
  updated_at: Time;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  type: string;
  permissions: List;
  prefix: string;
  hash: string;
  ip_allowlist: List;
  origin_allowlist: List;
  network_allowlist: List;
  method_allowlist: List;
  expires_at: Time | null;
  created_at: Time;
  last_used_at: Time | null;
  revoked_at: Time | null;
  created_by: string | null;
  method_denylist: List;
  contract_allowlist: List;
  user_agent_allowlist: List;
  logs_max_block_range: number | null;
  jwt_keys: Json;
  jwt_audiences: List;
  previous_hash: string | null;
  previous_prefix: string | null;
  previous_until: Time | null;
  /** Set by every write a resolution reads (not by last use): what the change feed asks for. */
  changed_at?: Time | null;
}

export interface UsageTable {
  account_id: string;
  month: string;
  compute_units: Big;
}

export interface UsageBatchesTable {
  id: string;
  at: Time;
}

export interface UsageMinutesTable {
  minute: string;
  account_id: string;
  key_id: string;
  network: string;
  method: string;
  code: number;
  requests: Big;
  compute_units: Big;
  latency_ms_sum: Big;
  l0: Big;
  l1: Big;
  l2: Big;
  l3: Big;
  l4: Big;
  l5: Big;
}

export interface RequestLogTable {
  id: Generated<Big>;
  at: Time;
  account_id: string;
  key_id: string;
  network: string;
  method: string;
  code: number;
  message: string | null;
  latency_ms: number;
  compute_units: number;
  request_bytes: number;
  response_bytes: number;
  cache: string | null;
  node: string | null;
  request_id: string;
  params: string | null;
  sample_every: number;
}

export interface SessionsTable {
  id_hash: string;
  account_id: string;
  member_id: string | null;
  csrf: string;
  created_at: Time;
  expires_at: Time;
}

export interface MembersTable {
  id: string;
  account_id: string;
  email: string;
  email_normalized: string;
  name: string;
  password_hash: string | null;
  role: string;
  created_at: Time;
  updated_at: Time;
}

export interface AccountTokensTable {
  id_hash: string;
  id: string;
  kind: string;
  account_id: string;
  member_id: string | null;
  email: string;
  role: string | null;
  created_at: Time;
  expires_at: Time;
  used_at: Time | null;
}

export interface MailOutboxTable {
  id: string;
  to_addr: string;
  subject: string;
  body: string;
  created_at: Time;
  next_attempt_at: Time;
  attempts: number;
  sent_at: Time | null;
  last_error: string | null;
  lease_owner: string | null;
  lease_until: Time | null;
}

export interface WebhooksTable {
  id: string;
  account_id: string;
  network: string;
  kind: string;
  url: string;
  options: string;
  secret: string;
  status: string;
  disabled_reason: string | null;
  created_at: Time;
  updated_at: Time;
}

export interface WebhookEventsTable {
  id: string;
  webhook_id: string;
  seq: Big;
  type: string;
  body: string;
  created_at: Time;
  status: string;
  attempts: number;
  next_attempt_at: Time;
  lease_owner: string | null;
  lease_until: Time | null;
  last_status: number | null;
  last_error: string | null;
  delivered_at: Time | null;
  last_attempt_at: Time | null;
  last_duration_ms: number | null;
  last_response: string | null;
}

export interface WebhookCountersTable {
  webhook_id: string;
  events: Big;
  delivered: Big;
  attempts: Big;
  delivery_ms_sum: Big;
}

export interface AlertSettingsTable {
  account_id: string;
  settings: Json;
  updated_at: Time;
}

export interface AlertsFiredTable {
  account_id: string;
  kind: string;
  threshold: number;
  period: string;
  fired_at: Time;
  value: number;
}

export interface MetaTable {
  name: string;
  value: string;
}

export interface Tables {
  plans: PlansTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  usage: UsageTable;
  usage_batches: UsageBatchesTable;
  usage_minutes: UsageMinutesTable;
  usage_hours: UsageMinutesTable;
  usage_days: UsageMinutesTable;
  request_log: RequestLogTable;
  sessions: SessionsTable;
  members: MembersTable;
  account_tokens: AccountTokensTable;
  mail_outbox: MailOutboxTable;
  webhooks: WebhooksTable;
  webhook_events: WebhookEventsTable;
  webhook_counters: WebhookCountersTable;
  alert_settings: AlertSettingsTable;
  alerts_fired: AlertsFiredTable;
  meta: MetaTable;
}

/** A query builder on the store's database, or on one of its transactions. */
export type Q = Kysely<Tables> | Transaction<Tables>;
