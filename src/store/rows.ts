import type { Account, ApiKey, KeyType, Member, MemberRole, Permission, Plan } from './model.ts';
import type { AccountToken, OutboxMail, Webhook, WebhookEvent, WebhookStats, WebhookStatus } from './store.ts';

/**
 * Columns and row-to-model mapping shared by both stores. The tables have the same columns on SQLite and
 * PostgreSQL; only the column types differ, and a `Codec` hides that (0/1 or boolean, JSON text or text[],
 * ISO text or Date, and bigint, which `pg` answers as a string).
 */
export interface Codec {
  bool(v: unknown): boolean;
  list(v: unknown): string[];
  time(v: unknown): string;
  bigint(v: unknown): number;
}

export type Row = Record<string, unknown>;

export const PLAN_COLUMNS = [
  'id', 'name', 'cu_per_second', 'cu_per_month', 'max_batch_size', 'debug_methods', 'max_filters', 'max_keys', 'max_webhooks', 'subscriptions_per_key', 'subscriptions_per_account', 'created_at', 'updated_at',
] as const;
export const ACCOUNT_COLUMNS = [
  'id', 'name', 'email', 'password_hash', 'status', 'role', 'plan_id', 'created_at', 'updated_at',
] as const;
export const KEY_COLUMNS = [
  'id', 'account_id', 'name', 'type', 'permissions', 'prefix', 'hash', 'ip_allowlist', 'origin_allowlist',
  'network_allowlist', 'method_allowlist', 'expires_at', 'created_at', 'last_used_at', 'revoked_at', 'created_by',
] as const;

/** The model fields an update may set, with their columns (identical on both stores). */
export const PLAN_FIELDS = {
  name: 'name', cuPerSecond: 'cu_per_second', cuPerMonth: 'cu_per_month', maxBatchSize: 'max_batch_size',
  debugMethods: 'debug_methods', maxFilters: 'max_filters', maxKeys: 'max_keys', maxWebhooks: 'max_webhooks',
  subscriptionsPerKey: 'subscriptions_per_key', subscriptionsPerAccount: 'subscriptions_per_account',
} as const;
export const ACCOUNT_FIELDS = {
  name: 'name', email: 'email', passwordHash: 'password_hash', status: 'status', role: 'role', planId: 'plan_id',
} as const;
export const KEY_FIELDS = {
  name: 'name', ipAllowlist: 'ip_allowlist', originAllowlist: 'origin_allowlist', networkAllowlist: 'network_allowlist',
  methodAllowlist: 'method_allowlist', expiresAt: 'expires_at',
} as const;

/** `t.col AS <prefix>col, ...`: lets one joined query carry the key, its account and its plan. */
export function selectList(columns: readonly string[], table: string, prefix = ''): string {
  return columns.map((c) => `${table}.${c} AS ${prefix}${c}`).join(', ');
}

/** Emails are unique whatever their case: the store keeps a lower-cased copy, folded the same way on both stores. */
export function normalizeEmail(email: string): string {
  return email.toLowerCase();
}

/** Timestamps are kept in one form (`toISOString`), so they compare as strings and read back identically. */
export function isoTime(value: string): string {
  return new Date(value).toISOString();
}

/**
 * The patch's updatable entries: those named in `fields` (never `id` or a timestamp, whatever reaches us at run
 * time) and not `undefined` (a `Partial` may spell "not given" either way).
 */
export function given<T extends object>(patch: T, fields: Readonly<Record<string, string>>): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([f, v]) => v !== undefined && Object.hasOwn(fields, f))) as Partial<T>;
}

const nullableTime = (c: Codec, v: unknown) => (v === null || v === undefined ? null : c.time(v));

export function planFromRow(r: Row, c: Codec, p = ''): Plan {
  return {
    id: r[p + 'id'] as string,
    name: r[p + 'name'] as string,
    cuPerSecond: Number(r[p + 'cu_per_second']),
    cuPerMonth: c.bigint(r[p + 'cu_per_month']),
    maxBatchSize: Number(r[p + 'max_batch_size']),
    debugMethods: c.bool(r[p + 'debug_methods']),
    maxFilters: Number(r[p + 'max_filters']),
    maxKeys: Number(r[p + 'max_keys']),
    maxWebhooks: Number(r[p + 'max_webhooks']),
    subscriptionsPerKey: Number(r[p + 'subscriptions_per_key']),
    subscriptionsPerAccount: Number(r[p + 'subscriptions_per_account']),
    createdAt: c.time(r[p + 'created_at']),
    updatedAt: c.time(r[p + 'updated_at']),
  };
}

export function accountFromRow(r: Row, c: Codec, p = ''): Account {
  return {
    id: r[p + 'id'] as string,
    name: r[p + 'name'] as string,
    email: r[p + 'email'] as string,
    passwordHash: (r[p + 'password_hash'] as string | null) ?? null,
    status: r[p + 'status'] as Account['status'],
    role: r[p + 'role'] as Account['role'],
    planId: r[p + 'plan_id'] as string,
    createdAt: c.time(r[p + 'created_at']),
    updatedAt: c.time(r[p + 'updated_at']),
  };
}

export function keyFromRow(r: Row, c: Codec, p = ''): ApiKey {
  return {
    id: r[p + 'id'] as string,
    accountId: r[p + 'account_id'] as string,
    name: r[p + 'name'] as string,
    type: r[p + 'type'] as KeyType,
    permissions: c.list(r[p + 'permissions']) as Permission[],
    prefix: r[p + 'prefix'] as string,
    hash: r[p + 'hash'] as string,
    ipAllowlist: c.list(r[p + 'ip_allowlist']),
    originAllowlist: c.list(r[p + 'origin_allowlist']),
    networkAllowlist: c.list(r[p + 'network_allowlist']),
    methodAllowlist: c.list(r[p + 'method_allowlist']),
    expiresAt: nullableTime(c, r[p + 'expires_at']),
    createdBy: (r[p + 'created_by'] as string | null | undefined) ?? null,
    createdAt: c.time(r[p + 'created_at']),
    lastUsedAt: nullableTime(c, r[p + 'last_used_at']),
    revokedAt: nullableTime(c, r[p + 'revoked_at']),
  };
}

/** Columns of usage_minutes, in the order the stores insert them. */
export const USAGE_MINUTE_COLUMNS = [
  'minute', 'account_id', 'key_id', 'network', 'method', 'code', 'requests', 'compute_units', 'latency_ms_sum',
  'l0', 'l1', 'l2', 'l3', 'l4', 'l5',
] as const;

const USAGE_SUMS = 'sum(requests), sum(compute_units), sum(latency_ms_sum), sum(l0), sum(l1), sum(l2), sum(l3), sum(l4), sum(l5)';

/** Adds an INSERT's rows to the usage rows already there (flushes, roll-ups and folds all add up). */
export const USAGE_UPSERT = `ON CONFLICT (minute, key_id, network, method, code) DO UPDATE SET
      requests = usage_minutes.requests + excluded.requests, compute_units = usage_minutes.compute_units + excluded.compute_units,
      latency_ms_sum = usage_minutes.latency_ms_sum + excluded.latency_ms_sum,
      l0 = usage_minutes.l0 + excluded.l0, l1 = usage_minutes.l1 + excluded.l1, l2 = usage_minutes.l2 + excluded.l2,
      l3 = usage_minutes.l3 + excluded.l3, l4 = usage_minutes.l4 + excluded.l4, l5 = usage_minutes.l5 + excluded.l5`;

/**
 * Usage of pruned revoked keys, as both stores run it with the account `$a` and a key-id list condition:
 * folded into the account's `(revoked)` rows, then deleted.
 */
export function revokedUsageSql(a: string, keys: string, group: string): { fold: string; drop: string } {
  return {
    fold: `INSERT INTO usage_minutes (${USAGE_MINUTE_COLUMNS.join(', ')})
      SELECT minute, account_id, ${group}, network, method, code, ${USAGE_SUMS} FROM usage_minutes
      WHERE account_id = ${a} AND ${keys} GROUP BY minute, account_id, network, method, code ${USAGE_UPSERT}`,
    drop: `DELETE FROM usage_minutes WHERE account_id = ${a} AND ${keys}`,
  };
}

/** Keys grouped by their account (the usage of keys is folded account by account). */
export function byAccount(keys: readonly { id: string; account_id: string }[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const k of keys) {
    const list = out.get(k.account_id);
    if (list) list.push(k.id); else out.set(k.account_id, [k.id]);
  }
  return out;
}

export const WEBHOOK_COLUMNS = ['id', 'account_id', 'network', 'kind', 'url', 'options', 'secret', 'status', 'disabled_reason', 'created_at', 'updated_at'] as const;

export function webhookFromRow(r: Row, c: Codec): Webhook {
  return {
    id: r.id as string, accountId: r.account_id as string, network: r.network as string, kind: r.kind as string, url: r.url as string,
    options: JSON.parse(r.options as string) as Record<string, unknown>, secret: r.secret as string, status: r.status as WebhookStatus,
    disabledReason: (r.disabled_reason as string | null) ?? null, createdAt: c.time(r.created_at), updatedAt: c.time(r.updated_at),
  };
}

export function webhookEventFromRow(r: Row, c: Codec): WebhookEvent {
  return {
    id: r.id as string, webhookId: r.webhook_id as string, seq: Number(r.seq), type: r.type as string, body: r.body as string,
    createdAt: c.time(r.created_at), status: r.status as WebhookEvent['status'], attempts: Number(r.attempts),
    nextAttemptAt: c.time(r.next_attempt_at), lastStatus: r.last_status === null || r.last_status === undefined ? null : Number(r.last_status),
    lastError: (r.last_error as string | null) ?? null, deliveredAt: r.delivered_at ? c.time(r.delivered_at) : null,
    lastAttemptAt: r.last_attempt_at ? c.time(r.last_attempt_at) : null,
    lastDurationMs: r.last_duration_ms === null || r.last_duration_ms === undefined ? null : Number(r.last_duration_ms),
    lastResponse: (r.last_response as string | null) ?? null,
  };
}

export function webhookStatsFromRow(r: Row, c: Codec): WebhookStats {
  const delivered = Number(r.delivered ?? 0);
  const attempts = Number(r.attempts ?? 0);
  return {
    webhookId: r.webhook_id as string, events: Number(r.events), delivered, pending: Number(r.pending ?? 0), attempts,
    failedAttempts: attempts - delivered, oldestPendingAt: r.oldest_pending ? c.time(r.oldest_pending) : null,
    meanDeliveryMs: r.mean_ms === null || r.mean_ms === undefined ? null : Math.round(Number(r.mean_ms)),
  };
}

const timeOrNull = (v: unknown, c: Codec): string | null => (v === null || v === undefined ? null : c.time(v));

export function memberFromRow(r: Row, c: Codec): Member {
  return {
    id: r.id as string, accountId: r.account_id as string, email: r.email as string, name: r.name as string,
    passwordHash: (r.password_hash as string | null) ?? null, role: r.role as MemberRole, createdAt: c.time(r.created_at), updatedAt: c.time(r.updated_at),
  };
}

export function tokenFromRow(r: Row, c: Codec): AccountToken {
  return {
    idHash: r.id_hash as string, id: r.id as string, kind: r.kind as AccountToken['kind'], accountId: r.account_id as string,
    memberId: (r.member_id as string | null) ?? null, email: r.email as string, role: (r.role as MemberRole | null) ?? null,
    createdAt: c.time(r.created_at), expiresAt: c.time(r.expires_at), usedAt: timeOrNull(r.used_at, c),
  };
}

export function mailFromRow(r: Row, c: Codec): OutboxMail {
  return {
    id: r.id as string, to: r.to_addr as string, subject: r.subject as string, body: r.body as string, createdAt: c.time(r.created_at),
    nextAttemptAt: c.time(r.next_attempt_at), attempts: Number(r.attempts), sentAt: timeOrNull(r.sent_at, c), lastError: (r.last_error as string | null) ?? null,
  };
}
