import type { FiredAlert, OutboxMail, UsageMinute, UsageQuery, Webhook, WebhookEvent, WebhookStats, WebhookStatus } from './store.ts';

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

/** The model fields an update may set, with their columns (identical on both stores). */
export const PLAN_FIELDS = {
  name: 'name', cuPerSecond: 'cu_per_second', cuPerMonth: 'cu_per_month', maxBatchSize: 'max_batch_size',
  debugMethods: 'debug_methods', maxFilters: 'max_filters', maxKeys: 'max_keys', maxWebhooks: 'max_webhooks',
  subscriptionsPerKey: 'subscriptions_per_key', subscriptionsPerAccount: 'subscriptions_per_account',
} as const;

/** Timestamps are kept in one form (`toISOString`), so they compare as strings and read back identically. */
export function isoTime(value: string): string {
  return new Date(value).toISOString();
}

/**
 * A usage batch as both stores write it: whole, positive units only (a zero adds nothing; anything else is a
 * caller's bug, refused before it reaches either database), ordered by account id so that concurrent batches
 * lock rows in one order (PostgreSQL would otherwise deadlock two flushes that share accounts).
 */
export function usageBatch(month: string, byAccount: ReadonlyMap<string, number>): { ids: string[]; units: number[] } {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new TypeError(`usage month must be YYYY-MM, not "${month}"`);
  const entries = [...byAccount].filter(([, units]) => units !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [id, units] of entries) {
    if (!Number.isSafeInteger(units) || units < 0) throw new TypeError(`usage of account "${id}" must be whole compute units, not ${units}`);
  }
  return { ids: entries.map(([id]) => id), units: entries.map(([, units]) => units) };
}

/** Columns of usage_minutes, in the order the stores insert them. */
export const USAGE_MINUTE_COLUMNS = [
  'minute', 'account_id', 'key_id', 'network', 'method', 'code', 'requests', 'compute_units', 'latency_ms_sum',
  'l0', 'l1', 'l2', 'l3', 'l4', 'l5',
] as const;

/** A usage row's values in USAGE_MINUTE_COLUMNS order. */
export function usageMinuteValues(u: UsageMinute): unknown[] {
  return [u.minute, u.accountId, u.keyId, u.network, u.method, u.code, u.requests, u.computeUnits, u.latencyMsSum, ...u.latency];
}

export function usageMinuteFromRow(r: Row): UsageMinute {
  return {
    minute: r.minute as string, accountId: r.account_id as string, keyId: r.key_id as string, network: r.network as string,
    method: r.method as string, code: Number(r.code), requests: Number(r.requests), computeUnits: Number(r.compute_units),
    latencyMsSum: Number(r.latency_ms_sum), latency: [r.l0, r.l1, r.l2, r.l3, r.l4, r.l5].map(Number),
  };
}

/** The conditions of a usage query (its range or cursor, account, key, network) and their values. */
function usageFilters(q: UsageQuery, placeholder: (i: number) => string): { parts: string[]; values: unknown[] } {
  // After a page, the cursor replaces the lower bound (it is past it): with both, SQLite seeks by the minute alone
  // and reads every row before the cursor again, page after page.
  const parts = q.after ? ['minute < ' + placeholder(1)] : ['minute >= ' + placeholder(1), 'minute < ' + placeholder(2)];
  const values: unknown[] = q.after ? [q.to] : [q.from, q.to];
  for (const [col, v] of [['account_id', q.accountId], ['key_id', q.keyId], ['network', q.network], ['method', q.method]] as const) {
    if (v === undefined) continue;
    values.push(v);
    parts.push(`${col} = ${placeholder(values.length)}`);
  }
  // Issue 22: by outcome. Rows keep the answer's code: 0 for a result, else the error's.
  if (q.status === 'ok') parts.push('code = 0');
  else if (q.status === 'error') parts.push('code <> 0');
  else if (q.status !== undefined) {
    values.push(q.status);
    parts.push(`code = ${placeholder(values.length)}`);
  }
  return { parts, values };
}

/** Where-clause of a usage query, with `$n` or `?` placeholders, and its values. */
export function usageWhere(q: UsageQuery, placeholder: (i: number) => string): { sql: string; values: unknown[] } {
  const { parts, values } = usageFilters(q, placeholder);
  if (q.after) {
    // Keyset paging in row order: a seek in the index, whatever page it is (an OFFSET would read the pages before).
    const a = q.after;
    values.push(a.minute, a.keyId, a.network, a.method, a.code);
    const n = values.length;
    parts.push(`(minute, key_id, network, method, code) > (${[n - 4, n - 3, n - 2, n - 1, n].map(placeholder).join(', ')})`);
  }
  let sql = `${parts.join(' AND ')} ORDER BY minute, key_id, network, method, code`;
  if (q.limit !== undefined) {
    values.push(q.limit);
    sql += ` LIMIT ${placeholder(values.length)}`;
  }
  return { sql, values };
}

/**
 * How many usage rows a query would read, up to `cap` (both stores, with `$n` or `?` placeholders): the inner
 * LIMIT stops the scan at `cap` rows (a refused analytics query costs one bounded count, not a read).
 * The same filters as the read, unordered (a count needs no order), so the same index answers it.
 */
export function usageCountSql(q: Omit<UsageQuery, 'limit' | 'after'>, cap: number, placeholder: (i: number) => string): { sql: string; values: unknown[] } {
  const { parts, values } = usageFilters({ ...q, after: undefined }, placeholder);
  values.push(cap);
  return { sql: `SELECT COUNT(*) AS n FROM (SELECT 1 FROM usage_minutes WHERE ${parts.join(' AND ')} LIMIT ${placeholder(values.length)}) AS capped`, values };
}

/** Requests, errors and units of a usage query's rows, added up (both stores; the alert checker). */
export function usageSumSql(q: Omit<UsageQuery, 'limit' | 'after'>, placeholder: (i: number) => string): { sql: string; values: unknown[] } {
  const { parts, values } = usageFilters({ ...q, after: undefined }, placeholder);
  return {
    sql: `SELECT coalesce(sum(requests), 0) AS requests, coalesce(sum(CASE WHEN code <> 0 THEN requests ELSE 0 END), 0) AS errors,
      coalesce(sum(compute_units), 0) AS compute_units FROM usage_minutes WHERE ${parts.join(' AND ')}`,
    values,
  };
}

/** A fired alert as both stores keep it. */
export function firedAlertFromRow(r: Row, c: Codec): FiredAlert {
  return {
    accountId: r.account_id as string, kind: r.kind as FiredAlert['kind'], threshold: Number(r.threshold), period: r.period as string,
    firedAt: c.time(r.fired_at), value: Number(r.value),
  };
}

const USAGE_SUMS = 'sum(requests), sum(compute_units), sum(latency_ms_sum), sum(l0), sum(l1), sum(l2), sum(l3), sum(l4), sum(l5)';

/** Adds an INSERT's rows to the usage rows already there (flushes, roll-ups and folds all add up). */
export const USAGE_UPSERT = `ON CONFLICT (minute, key_id, network, method, code) DO UPDATE SET
      requests = usage_minutes.requests + excluded.requests, compute_units = usage_minutes.compute_units + excluded.compute_units,
      latency_ms_sum = usage_minutes.latency_ms_sum + excluded.latency_ms_sum,
      l0 = usage_minutes.l0 + excluded.l0, l1 = usage_minutes.l1 + excluded.l1, l2 = usage_minutes.l2 + excluded.l2,
      l3 = usage_minutes.l3 + excluded.l3, l4 = usage_minutes.l4 + excluded.l4, l5 = usage_minutes.l5 + excluded.l5`;

/**
 * One hour's roll-up, as both stores run it with the hour's first minute `$h` and the next hour `$n`:
 * the minutes after `HH:00` folded into the `HH:00` row of their cell, then deleted.
 */
export function usageRollupSql(h: string, n: string): { fold: string; drop: string } {
  return {
    fold: `INSERT INTO usage_minutes (${USAGE_MINUTE_COLUMNS.join(', ')})
      SELECT ${h}, account_id, key_id, network, method, code, ${USAGE_SUMS} FROM usage_minutes
      WHERE minute > ${h} AND minute < ${n} GROUP BY account_id, key_id, network, method, code ${USAGE_UPSERT}`,
    drop: `DELETE FROM usage_minutes WHERE minute > ${h} AND minute < ${n}`,
  };
}

/** The hour `YYYY-MM-DDTHH:00` of a minute, and the next one. */
export function hourOf(minute: string): { hour: string; next: string } {
  const t = Date.parse(`${minute.slice(0, 13)}:00Z`);
  return { hour: `${minute.slice(0, 13)}:00`, next: new Date(t + 3_600_000).toISOString().slice(0, 16) };
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

export function mailFromRow(r: Row, c: Codec): OutboxMail {
  return {
    id: r.id as string, to: r.to_addr as string, subject: r.subject as string, body: r.body as string, createdAt: c.time(r.created_at),
    nextAttemptAt: c.time(r.next_attempt_at), attempts: Number(r.attempts), sentAt: timeOrNull(r.sent_at, c), lastError: (r.last_error as string | null) ?? null,
  };
}
