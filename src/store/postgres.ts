import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { migratePostgres } from './postgres-migrations.ts';
import { SqlDb } from './sql/sql-db.ts';
import {
  PLAN_COLUMNS,
  mailFromRow, usageBatch, usageMinuteFromRow, usageMinuteValues, usageWhere, usageCountSql, USAGE_MINUTE_COLUMNS, hourOf, usageRollupSql, webhookEventFromRow, webhookFromRow, webhookStatsFromRow, type Codec, type Row, usageSumSql, firedAlertFromRow,
} from './rows.ts';
import type { MailAttempt, NewOutboxMail, OutboxMail, Store, UsageMinute, UsageQuery, NewWebhook, NewWebhookEvent, Webhook, WebhookAttempt, WebhookEvent, WebhookPatch, WebhookStats, AlertKind, AlertSettings, FiredAlert, UsageSums } from './store.ts';

const codec: Codec = {
  bool: (v) => v === true,
  list: (v) => v as string[],
  time: (v) => (v instanceof Date ? v : new Date(v as string)).toISOString(),
  bigint: (v) => Number(v), // `pg` answers int8 as a string; quotas and usage stay far below 2^53.
};

const insertSql = (table: string, cols: readonly string[]) =>
  `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING *`;

/** A webhook's counters, its backlog's oldest event (first in the index webhook_events_waiting) and mean delivery time. */
export const WEBHOOK_STATS_SQL = `SELECT c.webhook_id, c.events, c.delivered, c.events - c.delivered AS pending, c.attempts,
    CASE WHEN c.events > c.delivered THEN (SELECT e.created_at FROM webhook_events e WHERE e.webhook_id = c.webhook_id AND e.status = 'pending' ORDER BY e.created_at LIMIT 1) END AS oldest_pending,
    CASE WHEN c.delivered > 0 THEN c.delivery_ms_sum::float8 / c.delivered END AS mean_ms
  FROM webhook_counters c JOIN webhooks w ON w.id = c.webhook_id`;

// Static statements are named: `pg` prepares each once per connection.
const Q = {
  listPlans: 'SELECT * FROM plans ORDER BY cu_per_month, cu_per_second, id',
  plan: 'SELECT * FROM plans WHERE id = $1',
  insertPlan: insertSql('plans', PLAN_COLUMNS),
  deletePlan: 'DELETE FROM plans WHERE id = $1',
  // One statement for the whole batch, so it is one transaction; rows in account order (usageBatch sorts them,
  // ORDER BY keeps it through the join) so that concurrent flushes lock rows in the same order and never deadlock.
  // Accounts that are gone are skipped (as touchKeys skips keys): one stale entry must not lose the batch.
  // Once per batch id: the batch's id is inserted in the same statement, and a batch already applied (its id there)
  // adds nothing; a retry racing the original waits on the id's row, then adds nothing. Ids older than a day go in
  // the same statement.
  addUsage: `WITH old AS (DELETE FROM usage_batches WHERE at < now() - interval '1 day'),
    fresh AS (INSERT INTO usage_batches (id) VALUES ($4) ON CONFLICT (id) DO NOTHING RETURNING id)
    INSERT INTO usage (account_id, month, compute_units)
    SELECT v.id, $1, v.units FROM unnest($2::text[], $3::bigint[]) WITH ORDINALITY AS v (id, units, n)
    JOIN accounts a ON a.id = v.id WHERE EXISTS (SELECT 1 FROM fresh) ORDER BY v.n
    ON CONFLICT (account_id, month) DO UPDATE SET compute_units = usage.compute_units + excluded.compute_units`,
  usage: 'SELECT compute_units FROM usage WHERE account_id = $1 AND month = $2',
  getMeta: 'SELECT value FROM meta WHERE name = $1',
  setMeta: 'INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
  ping: 'SELECT 1',
  // One statement per batch: unnest of one array per column, added to what other instances flushed; once per batch
  // id, as addUsage.
  addUsageMinutes: `WITH old AS (DELETE FROM usage_batches WHERE at < now() - interval '1 day'),
    fresh AS (INSERT INTO usage_batches (id) VALUES ($16) ON CONFLICT (id) DO NOTHING RETURNING id)
    INSERT INTO usage_minutes (${USAGE_MINUTE_COLUMNS.join(', ')})
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::bigint[], $8::bigint[],
      $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[], $15::bigint[])
    WHERE EXISTS (SELECT 1 FROM fresh)
    ON CONFLICT (minute, key_id, network, method, code) DO UPDATE SET
      requests = usage_minutes.requests + excluded.requests, compute_units = usage_minutes.compute_units + excluded.compute_units,
      latency_ms_sum = usage_minutes.latency_ms_sum + excluded.latency_ms_sum,
      l0 = usage_minutes.l0 + excluded.l0, l1 = usage_minutes.l1 + excluded.l1, l2 = usage_minutes.l2 + excluded.l2,
      l3 = usage_minutes.l3 + excluded.l3, l4 = usage_minutes.l4 + excluded.l4, l5 = usage_minutes.l5 + excluded.l5`,
  pruneUsageMinutes: 'DELETE FROM usage_minutes WHERE minute < $1',
  insertWebhook: `INSERT INTO webhooks (${['id', 'account_id', 'network', 'kind', 'url', 'options', 'secret', 'status', 'disabled_reason', 'created_at', 'updated_at'].join(', ')})
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, now(), now()) RETURNING *`,
  webhook: 'SELECT * FROM webhooks WHERE id = $1',
  webhooksOf: 'SELECT * FROM webhooks WHERE account_id = $1 ORDER BY created_at, id',
  allWebhooks: 'SELECT * FROM webhooks ORDER BY created_at, id',
  updateWebhook: `UPDATE webhooks SET url = coalesce($2, url), options = coalesce($3, options), secret = coalesce($4, secret),
    status = coalesce($5, status), disabled_reason = CASE WHEN $6::boolean THEN $7 ELSE disabled_reason END, updated_at = now() WHERE id = $1 RETURNING *`,
  deleteWebhook: 'DELETE FROM webhooks WHERE id = $1',
  // One event at a time, its webhook's row locked: the seq of two instances' concurrent adds cannot collide.
  addWebhookEvent: `WITH w AS (SELECT id FROM webhooks WHERE id = $2 FOR UPDATE)
    INSERT INTO webhook_events (id, webhook_id, seq, type, body, created_at, status, attempts, next_attempt_at)
    SELECT $1, w.id, coalesce((SELECT max(seq) FROM webhook_events WHERE webhook_id = w.id), 0) + 1, $3, $4, $5::timestamptz, 'pending', 0, $5::timestamptz FROM w
    ON CONFLICT (id) DO NOTHING`,
  // Leases the due heads of the active webhooks; SKIP LOCKED: another instance claiming at the same moment takes others.
  claimWebhookEvents: `WITH due AS (
      SELECT e.id FROM webhooks w
      JOIN webhook_events e ON e.id = (SELECT p.id FROM webhook_events p WHERE p.webhook_id = w.id AND p.status = 'pending' ORDER BY p.seq LIMIT 1)
      WHERE w.status = 'active' AND e.next_attempt_at <= $2::timestamptz
        AND (e.lease_until IS NULL OR e.lease_until <= $2::timestamptz)
      ORDER BY e.next_attempt_at, e.webhook_id LIMIT $4 FOR UPDATE OF e SKIP LOCKED)
    UPDATE webhook_events SET lease_owner = $1, lease_until = $3::timestamptz FROM due WHERE webhook_events.id = due.id RETURNING webhook_events.*`,
  renewWebhookLeases: `UPDATE webhook_events SET lease_until = $3::timestamptz
    WHERE id = ANY($2::text[]) AND lease_owner = $1 AND status = 'pending'`,
  recordWebhookAttempt: `UPDATE webhook_events SET attempts = attempts + 1, last_status = $3, last_error = $4,
    last_attempt_at = $6::timestamptz, last_duration_ms = $8, last_response = $9,
    status = CASE WHEN $5::boolean THEN 'delivered' ELSE status END, delivered_at = CASE WHEN $5::boolean THEN $6::timestamptz ELSE delivered_at END,
    next_attempt_at = $7::timestamptz, lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2`,
  webhookEvents: 'SELECT * FROM webhook_events WHERE webhook_id = $1 ORDER BY seq DESC LIMIT $2',
  pruneWebhookEvents: "DELETE FROM webhook_events WHERE status = 'delivered' AND delivered_at < $1",
  webhookEventsById: 'SELECT * FROM webhook_events WHERE id = ANY($1::text[]) ORDER BY webhook_id, seq',
  // The maintained counters (migration 9), one row per webhook: nothing here reads the events but the first waiting
  // one of a webhook that has any, by index (this counted every tenant's events).
  webhookStats: `${WEBHOOK_STATS_SQL} WHERE c.events > 0 ORDER BY c.webhook_id`,
  webhookStatsOf: `${WEBHOOK_STATS_SQL} WHERE w.account_id = $1 AND c.events > 0 ORDER BY c.webhook_id`,
} as const;

/** The store for several instances sharing one database (`DATABASE_URL`). */
export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  private closed = false;

  private constructor(private readonly pool: pg.Pool) {}

  /** Connects and brings the schema up to date; safe when several instances start at once. */
  static async open(url: string, bounds: { connectTimeoutMs?: number; queryTimeoutMs?: number } = {}): Promise<PostgresStore> {
    // Every I/O bounded: a server that is down or hung (SIGSTOP, a lost network) fails a connect within
    // connectTimeoutMs and a query within queryTimeoutMs, instead of holding its callers for ever.
    const pool = new pg.Pool({
      connectionString: url,
      connectionTimeoutMillis: bounds.connectTimeoutMs ?? 3000,
      query_timeout: bounds.queryTimeoutMs ?? 30_000,
    });
    // An idle connection dropped by the server must not crash the process; the next query reports the failure.
    pool.on('error', () => {});
    try {
      await migratePostgres(pool);
    } catch (err) {
      await pool.end();
      throw err;
    }
    return new PostgresStore(pool);
  }

  /** The same pool as a Kysely database, for the stores that have moved to their domain. */
  sqlDb(): SqlDb {
    return SqlDb.postgres(this.pool);
  }

  private async rows(name: keyof typeof Q, values: unknown[] = []): Promise<Row[]> {
    return (await this.pool.query<Row>({ name, text: Q[name], values })).rows;
  }






  async addUsage(month: string, byAccount: ReadonlyMap<string, number>, batchId?: string): Promise<void> {
    const { ids, units } = usageBatch(month, byAccount);
    if (ids.length === 0) return;
    await this.rows('addUsage', [month, ids, units, batchId ?? randomUUID()]);
  }

  async getUsage(accountId: string, month: string): Promise<number> {
    const [row] = await this.rows('usage', [accountId, month]);
    return row ? codec.bigint(row.compute_units) : 0;
  }

  async addUsageMinutes(rows: readonly UsageMinute[], batchId?: string): Promise<void> {
    if (rows.length === 0) return;
    const columns = USAGE_MINUTE_COLUMNS.map(() => [] as unknown[]);
    for (const r of rows) usageMinuteValues(r).forEach((v, i) => columns[i].push(v));
    await this.rows('addUsageMinutes', [...columns, batchId ?? randomUUID()]);
  }

  async listUsageMinutes(q: UsageQuery): Promise<UsageMinute[]> {
    const where = usageWhere(q, (i) => `$${i}`);
    const res = await this.pool.query<Row>(`SELECT * FROM usage_minutes WHERE ${where.sql}`, where.values);
    return res.rows.map(usageMinuteFromRow);
  }

  async countUsageMinutes(q: Omit<UsageQuery, 'limit' | 'after'>, cap: number): Promise<number> {
    const count = usageCountSql(q, cap, (i) => `$${i}`);
    const res = await this.pool.query<{ n: string }>(count.sql, count.values);
    return Number(res.rows[0].n);
  }

  async pruneUsageMinutes(before: string): Promise<void> {
    await this.rows('pruneUsageMinutes', [before]);
  }

  // Issue 22: usage filters, alerts
  async sumUsageMinutes(q: Omit<UsageQuery, 'limit' | 'after'>): Promise<UsageSums> {
    const sum = usageSumSql(q, (i) => `$${i}`);
    const r = (await this.pool.query<Row>(sum.sql, sum.values)).rows[0];
    return { requests: Number(r.requests), errors: Number(r.errors), computeUnits: Number(r.compute_units) };
  }

  async getAlertSettings(accountId: string): Promise<AlertSettings | undefined> {
    const r = (await this.pool.query<{ settings: AlertSettings }>('SELECT settings FROM alert_settings WHERE account_id = $1', [accountId])).rows[0];
    return r?.settings;
  }

  async putAlertSettings(accountId: string, settings: AlertSettings, updatedAt: string): Promise<void> {
    await this.pool.query(`INSERT INTO alert_settings (account_id, settings, updated_at) VALUES ($1, $2, $3)
      ON CONFLICT (account_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`, [accountId, JSON.stringify(settings), updatedAt]);
  }

  async listAlertSettings(): Promise<Array<{ accountId: string; settings: AlertSettings }>> {
    const { rows } = await this.pool.query<{ account_id: string; settings: AlertSettings }>('SELECT account_id, settings FROM alert_settings ORDER BY account_id');
    return rows.map((r) => ({ accountId: r.account_id, settings: r.settings }));
  }

  async claimAlert(a: FiredAlert): Promise<boolean> {
    const res = await this.pool.query(`INSERT INTO alerts_fired (account_id, kind, threshold, period, fired_at, value) VALUES ($1, $2, $3, $4, $5, $6)
      ON CONFLICT DO NOTHING`, [a.accountId, a.kind, a.threshold, a.period, a.firedAt, a.value]);
    return res.rowCount === 1;
  }

  async closeAlert(accountId: string, kind: AlertKind, threshold: number): Promise<boolean> {
    // The period a closed alert keeps is its firing time in the same text form as SQLite's (toISOString).
    const res = await this.pool.query(`UPDATE alerts_fired SET period = to_char(fired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      WHERE account_id = $1 AND kind = $2 AND threshold = $3 AND period = 'open'`, [accountId, kind, threshold]);
    return (res.rowCount ?? 0) > 0;
  }

  async listFiredAlerts(accountId: string, limit: number): Promise<FiredAlert[]> {
    const { rows } = await this.pool.query<Row>('SELECT * FROM alerts_fired WHERE account_id = $1 ORDER BY fired_at DESC, kind, threshold LIMIT $2', [accountId, limit]);
    return rows.map((r) => firedAlertFromRow(r, codec));
  }

  /** Runs `work` in one transaction with a statement time-out (retention's statements must not hold locks for ever). */
  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query("SET LOCAL statement_timeout = '30s'");
      const out = await work(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async rollupUsageHour(from: string, before: string): Promise<{ hour: string; removed: number } | undefined> {
    const first = (await this.pool.query<{ minute: string }>('SELECT minute FROM usage_minutes WHERE minute >= $1 AND minute < $2 ORDER BY minute LIMIT 1', [from, before])).rows[0];
    if (!first) return undefined;
    const { hour, next } = hourOf(first.minute);
    const sql = usageRollupSql('$1::text', '$2::text');
    const removed = await this.transaction(async (c) => {
      await c.query(sql.fold, [hour, next]);
      return (await c.query(sql.drop, [hour, next])).rowCount ?? 0;
    });
    return { hour, removed };
  }

  // Issue 22: members, tokens, mail outbox

  async enqueueMail(m: NewOutboxMail): Promise<void> {
    await this.pool.query(`INSERT INTO mail_outbox (id, to_addr, subject, body, created_at, next_attempt_at, attempts)
      VALUES ($1, $2, $3, $4, $5, $5, 0)`, [m.id, m.to, m.subject, m.body, m.createdAt]);
  }

  async claimMail(owner: string, now: string, leaseUntil: string, limit: number): Promise<OutboxMail[]> {
    // SKIP LOCKED: another instance claiming at the same moment takes other messages.
    const { rows } = await this.pool.query<Row>(`WITH due AS (
        SELECT id FROM mail_outbox WHERE sent_at IS NULL AND body <> '' AND next_attempt_at <= $2::timestamptz
          AND (lease_until IS NULL OR lease_until <= $2::timestamptz)
        ORDER BY next_attempt_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
      UPDATE mail_outbox m SET lease_owner = $1, lease_until = $3::timestamptz FROM due WHERE m.id = due.id RETURNING m.*`, [owner, now, leaseUntil, limit]);
    return rows.map((r) => mailFromRow(r, codec)).sort((a, b) => a.nextAttemptAt.localeCompare(b.nextAttemptAt));
  }

  async recordMailAttempt(id: string, owner: string, a: MailAttempt): Promise<void> {
    await this.pool.query(`UPDATE mail_outbox SET attempts = attempts + 1, last_error = $3,
        sent_at = CASE WHEN $4::boolean THEN $5::timestamptz ELSE sent_at END,
        body = CASE WHEN $4::boolean OR $6::boolean THEN '' ELSE body END,
        next_attempt_at = $7::timestamptz, lease_owner = NULL, lease_until = NULL
      WHERE id = $1 AND lease_owner = $2`, [id, owner, a.error, a.sent, a.at, a.giveUp ?? false, a.nextAttemptAt]);
  }

  async listMail(limit: number): Promise<OutboxMail[]> {
    return (await this.pool.query<Row>('SELECT * FROM mail_outbox ORDER BY created_at DESC, id DESC LIMIT $1', [limit])).rows.map((r) => mailFromRow(r, codec));
  }

  async pruneMail(before: string): Promise<number> {
    return (await this.pool.query("DELETE FROM mail_outbox WHERE created_at < $1 AND (sent_at IS NOT NULL OR body = '')", [before])).rowCount ?? 0;
  }

  async createWebhook(w: NewWebhook): Promise<Webhook> {
    const [r] = await this.rows('insertWebhook', [w.id, w.accountId, w.network, w.kind, w.url, JSON.stringify(w.options), w.secret, w.status]);
    return webhookFromRow(r, codec);
  }

  async getWebhook(id: string): Promise<Webhook | undefined> {
    const [r] = await this.rows('webhook', [id]);
    return r && webhookFromRow(r, codec);
  }

  async listWebhooks(accountId?: string): Promise<Webhook[]> {
    const rows = accountId === undefined ? await this.rows('allWebhooks') : await this.rows('webhooksOf', [accountId]);
    return rows.map((r) => webhookFromRow(r, codec));
  }

  async updateWebhook(id: string, p: WebhookPatch): Promise<Webhook | undefined> {
    const [r] = await this.rows('updateWebhook', [id, p.url ?? null, p.options ? JSON.stringify(p.options) : null, p.secret ?? null, p.status ?? null, p.disabledReason !== undefined, p.disabledReason ?? null]);
    return r && webhookFromRow(r, codec);
  }

  async deleteWebhook(id: string): Promise<boolean> {
    return ((await this.pool.query({ name: 'deleteWebhook', text: Q.deleteWebhook, values: [id] })).rowCount ?? 0) > 0;
  }

  async addWebhookEvents(events: readonly NewWebhookEvent[]): Promise<void> {
    if (events.length === 0) return;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // In webhook id order (stable: each webhook's events keep theirs), so webhook rows and their counters are locked in
      // the order the counters' trigger and the prunes lock them (migration 9): concurrent writers cannot deadlock.
      const ordered = [...events].sort((a, b) => (a.webhookId < b.webhookId ? -1 : a.webhookId > b.webhookId ? 1 : 0));
      for (const e of ordered) await client.query({ name: 'addWebhookEvent', text: Q.addWebhookEvent, values: [e.id, e.webhookId, e.type, e.body, e.createdAt] });
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async claimWebhookEvents(owner: string, now: string, leaseUntil: string, limit: number): Promise<WebhookEvent[]> {
    return (await this.rows('claimWebhookEvents', [owner, now, leaseUntil, limit])).map((r) => webhookEventFromRow(r, codec)).sort((a, b) => (a.nextAttemptAt < b.nextAttemptAt ? -1 : 1));
  }

  async renewWebhookLeases(owner: string, ids: readonly string[], leaseUntil: string): Promise<number> {
    if (ids.length === 0) return 0;
    return (await this.pool.query({ name: 'renewWebhookLeases', text: Q.renewWebhookLeases, values: [owner, ids, leaseUntil] })).rowCount ?? 0;
  }

  async recordWebhookAttempt(id: string, owner: string, a: WebhookAttempt): Promise<void> {
    await this.rows('recordWebhookAttempt', [id, owner, a.status, a.error, a.delivered, a.at, a.nextAttemptAt, a.durationMs ?? null, a.responseBody ?? null]);
  }

  async listWebhookEvents(webhookId: string, limit: number): Promise<WebhookEvent[]> {
    return (await this.rows('webhookEvents', [webhookId, limit])).map((r) => webhookEventFromRow(r, codec));
  }

  async pruneWebhookEvents(before: string): Promise<number> {
    return (await this.pool.query({ name: 'pruneWebhookEvents', text: Q.pruneWebhookEvents, values: [before] })).rowCount ?? 0;
  }

  async pruneWebhookTestEvents(before: string): Promise<number> {
    return (await this.pool.query("DELETE FROM webhook_events WHERE type = 'webhook.test' AND created_at < $1", [before])).rowCount ?? 0;
  }

  async getWebhookEvents(ids: readonly string[]): Promise<WebhookEvent[]> {
    return ids.length === 0 ? [] : (await this.rows('webhookEventsById', [ids])).map((r) => webhookEventFromRow(r, codec));
  }

  async webhookStats(accountId?: string): Promise<WebhookStats[]> {
    const rows = accountId === undefined ? await this.rows('webhookStats') : await this.rows('webhookStatsOf', [accountId]);
    return rows.map((r) => webhookStatsFromRow(r, codec));
  }

  async getMeta(name: string): Promise<string | undefined> {
    const [row] = await this.rows('getMeta', [name]);
    return row?.value as string | undefined;
  }

  async setMeta(name: string, value: string): Promise<void> {
    await this.rows('setMeta', [name, value]);
  }

  async ping(): Promise<void> {
    await this.rows('ping');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
