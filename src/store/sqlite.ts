import type Database from 'better-sqlite3';
import {
  PLAN_COLUMNS, isoTime,
  mailFromRow, usageBatch, usageMinuteFromRow, usageMinuteValues, usageWhere, usageCountSql, USAGE_MINUTE_COLUMNS, hourOf, usageRollupSql, WEBHOOK_COLUMNS, webhookEventFromRow, webhookFromRow, webhookStatsFromRow, type Codec, type Row, usageSumSql, firedAlertFromRow,
} from './rows.ts';
import { openSqlite } from './sqlite-open.ts';
import { SqlDb } from './sql/sql-db.ts';
import type { MailAttempt, NewOutboxMail, OutboxMail, Store, UsageMinute, UsageQuery, NewWebhook, NewWebhookEvent, Webhook, WebhookAttempt, WebhookEvent, WebhookPatch, WebhookStats, AlertKind, AlertSettings, FiredAlert, UsageSums } from './store.ts';

const codec: Codec = {
  bool: (v) => v === 1,
  list: (v) => JSON.parse(v as string) as string[],
  time: (v) => v as string,
  bigint: (v) => Number(v),
};

const webhookParams = (w: Webhook) => ({
  id: w.id, account_id: w.accountId, network: w.network, kind: w.kind, url: w.url, options: JSON.stringify(w.options), secret: w.secret,
  status: w.status, disabled_reason: w.disabledReason, created_at: w.createdAt, updated_at: w.updatedAt,
});
const insertSql = (table: string, cols: readonly string[]) =>
  `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => '@' + c).join(', ')})`;
const updateSql = (table: string, cols: readonly string[]) =>
  `UPDATE ${table} SET ${cols.filter((c) => c !== 'id').map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`;

/** A webhook's counters, its backlog's oldest event (first in the index webhook_events_waiting) and mean delivery time. */
export const WEBHOOK_STATS_SQL = `SELECT c.webhook_id, c.events, c.delivered, c.events - c.delivered AS pending, c.attempts,
    CASE WHEN c.events > c.delivered THEN (SELECT e.created_at FROM webhook_events e WHERE e.webhook_id = c.webhook_id AND e.status = 'pending' ORDER BY e.created_at LIMIT 1) END AS oldest_pending,
    CASE WHEN c.delivered > 0 THEN c.delivery_ms_sum * 1.0 / c.delivered END AS mean_ms
  FROM webhook_counters c JOIN webhooks w ON w.id = c.webhook_id`;

/** The embedded default store: one SQLite file in WAL mode (crash-safe, readers never block the writer). */
export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly stmts;
  private readonly addUsageAll;
  private readonly addUsageMinutesAll;
  private readonly addWebhookEventsAll;
  private readonly claimAll;

  constructor(file: string) {
    this.db = openSqlite(file);
    const db = this.db;
    this.stmts = {
      listPlans: db.prepare<[], Row>('SELECT * FROM plans ORDER BY cu_per_month, cu_per_second, id'),
      plan: db.prepare<[string], Row>('SELECT * FROM plans WHERE id = ?'),
      insertPlan: db.prepare(insertSql('plans', PLAN_COLUMNS)),
      updatePlan: db.prepare(updateSql('plans', PLAN_COLUMNS)),
      deletePlan: db.prepare<[string]>('DELETE FROM plans WHERE id = ?'),
      // Accounts that are gone are skipped (as touchKeys skips keys): one stale entry must not lose the batch.
      addUsage: db.prepare(
        `INSERT INTO usage (account_id, month, compute_units) SELECT id, @month, @units FROM accounts WHERE id = @id
         ON CONFLICT (account_id, month) DO UPDATE SET compute_units = usage.compute_units + excluded.compute_units`,
      ),
      addUsageBatch: db.prepare('INSERT OR IGNORE INTO usage_batches (id, at) VALUES (?, ?)'),
      pruneUsageBatches: db.prepare('DELETE FROM usage_batches WHERE at < ?'),
      usage: db.prepare<[string, string], { compute_units: number }>('SELECT compute_units FROM usage WHERE account_id = ? AND month = ?'),
      getMeta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE name = ?'),
      setMeta: db.prepare('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
      ping: db.prepare('SELECT 1'),
      addUsageMinute: db.prepare(
        `INSERT INTO usage_minutes (${USAGE_MINUTE_COLUMNS.join(', ')}) VALUES (${USAGE_MINUTE_COLUMNS.map(() => '?').join(', ')})
         ON CONFLICT (minute, key_id, network, method, code) DO UPDATE SET
           requests = requests + excluded.requests, compute_units = compute_units + excluded.compute_units,
           latency_ms_sum = latency_ms_sum + excluded.latency_ms_sum, l0 = l0 + excluded.l0, l1 = l1 + excluded.l1,
           l2 = l2 + excluded.l2, l3 = l3 + excluded.l3, l4 = l4 + excluded.l4, l5 = l5 + excluded.l5`,
      ),
      pruneUsageMinutes: db.prepare<[string]>('DELETE FROM usage_minutes WHERE minute < ?'),
      insertWebhook: db.prepare(insertSql('webhooks', WEBHOOK_COLUMNS)),
      webhook: db.prepare<[string], Row>('SELECT * FROM webhooks WHERE id = ?'),
      webhooksOf: db.prepare<[string], Row>('SELECT * FROM webhooks WHERE account_id = ? ORDER BY created_at, id'),
      allWebhooks: db.prepare<[], Row>('SELECT * FROM webhooks ORDER BY created_at, id'),
      deleteWebhook: db.prepare<[string]>('DELETE FROM webhooks WHERE id = ?'),
      addWebhookEvent: db.prepare(
        `INSERT INTO webhook_events (id, webhook_id, seq, type, body, created_at, status, attempts, next_attempt_at)
         SELECT @id, @webhookId, coalesce(max(seq), 0) + 1, @type, @body, @createdAt, 'pending', 0, @createdAt
         FROM webhook_events WHERE webhook_id = @webhookId HAVING EXISTS (SELECT 1 FROM webhooks WHERE id = @webhookId)
         ON CONFLICT (id) DO NOTHING`,
      ),
      dueWebhookEvents: db.prepare<{ now: string; limit: number }, Row>(
        // Per active webhook, its oldest pending event (by index), if due and not leased (also not by this owner: an
        // event leased is in flight, and a claim must not hand it out twice nor spend its limit on it).
        `SELECT e.* FROM webhooks w
         JOIN webhook_events e ON e.id = (SELECT p.id FROM webhook_events p WHERE p.webhook_id = w.id AND p.status = 'pending' ORDER BY p.seq LIMIT 1)
         WHERE w.status = 'active' AND e.next_attempt_at <= @now
           AND (e.lease_until IS NULL OR e.lease_until <= @now)
         ORDER BY e.next_attempt_at, e.webhook_id LIMIT @limit`,
      ),
      leaseWebhookEvent: db.prepare('UPDATE webhook_events SET lease_owner = ?, lease_until = ? WHERE id = ?'),
      renewWebhookLeases: db.prepare<{ owner: string; ids: string; leaseUntil: string }>(
        `UPDATE webhook_events SET lease_until = @leaseUntil
         WHERE id IN (SELECT value FROM json_each(@ids)) AND lease_owner = @owner AND status = 'pending'`,
      ),
      recordWebhookAttempt: db.prepare(
        `UPDATE webhook_events SET attempts = attempts + 1, last_status = @status, last_error = @error,
           last_attempt_at = @at, last_duration_ms = @durationMs, last_response = @responseBody,
           status = CASE WHEN @delivered = 1 THEN 'delivered' ELSE status END,
           delivered_at = CASE WHEN @delivered = 1 THEN @at ELSE delivered_at END,
           next_attempt_at = @nextAttemptAt, lease_owner = NULL, lease_until = NULL
         WHERE id = @id AND lease_owner = @owner`,
      ),
      webhookEvents: db.prepare<[string, number], Row>('SELECT * FROM webhook_events WHERE webhook_id = ? ORDER BY seq DESC LIMIT ?'),
      pruneWebhookEvents: db.prepare<[string]>("DELETE FROM webhook_events WHERE status = 'delivered' AND delivered_at < ?"),
      webhookEventsById: db.prepare<[string], Row>('SELECT * FROM webhook_events WHERE id IN (SELECT value FROM json_each(?)) ORDER BY webhook_id, seq'),
      // The maintained counters (migration 10), one row per webhook: nothing here reads the events but the first
      // waiting one of a webhook that has any, by index (this counted every tenant's events).
      webhookStats: db.prepare<[], Row>(`${WEBHOOK_STATS_SQL} WHERE c.events > 0 ORDER BY c.webhook_id`),
      webhookStatsOf: db.prepare<[string], Row>(`${WEBHOOK_STATS_SQL} WHERE w.account_id = ? AND c.events > 0 ORDER BY c.webhook_id`),
    };
    const { stmts } = this;
    this.addUsageMinutesAll = db.transaction((rows: readonly UsageMinute[], batchId?: string) => {
      if (batchId !== undefined && !this.firstTime(batchId)) return;
      for (const r of rows) stmts.addUsageMinute.run(...usageMinuteValues(r));
    });
    this.addWebhookEventsAll = db.transaction((events: readonly NewWebhookEvent[]) => {
      for (const e of events) stmts.addWebhookEvent.run(e);
    });
    this.claimAll = db.transaction((owner: string, now: string, leaseUntil: string, limit: number) => {
      const rows = stmts.dueWebhookEvents.all({ now, limit });
      for (const r of rows) stmts.leaseWebhookEvent.run(owner, leaseUntil, r.id);
      return rows.map((r) => webhookEventFromRow({ ...r, lease_owner: owner, lease_until: leaseUntil }, codec));
    });
    // With a batch id, once: a batch whose id is already there adds nothing (see postgres.ts addUsage).
    this.addUsageAll = db.transaction((month: string, ids: string[], units: number[], batchId?: string) => {
      if (batchId !== undefined && !this.firstTime(batchId)) return;
      ids.forEach((id, i) => stmts.addUsage.run({ id, month, units: units[i] }));
    });
  }






  async addUsage(month: string, byAccount: ReadonlyMap<string, number>, batchId?: string): Promise<void> {
    const { ids, units } = usageBatch(month, byAccount);
    // IMMEDIATE: takes the write lock first, so another instance on the file waits (busy_timeout) rather than failing.
    if (ids.length > 0) this.addUsageAll.immediate(month, ids, units, batchId);
  }

  async getUsage(accountId: string, month: string): Promise<number> {
    return this.stmts.usage.get(accountId, month)?.compute_units ?? 0;
  }

  async addUsageMinutes(rows: readonly UsageMinute[], batchId?: string): Promise<void> {
    if (rows.length > 0) this.addUsageMinutesAll.immediate(rows, batchId);
  }

  /**
   * Whether a usage batch of this id is new (then it is recorded as applied, inside the caller's transaction); ids
   * older than a day go. See postgres.ts addUsage.
   */
  private firstTime(batchId: string): boolean {
    const at = new Date();
    this.stmts.pruneUsageBatches.run(new Date(at.getTime() - 86_400_000).toISOString());
    return this.stmts.addUsageBatch.run(batchId, at.toISOString()).changes > 0;
  }

  async listUsageMinutes(q: UsageQuery): Promise<UsageMinute[]> {
    const where = usageWhere(q, () => '?');
    return this.db.prepare<unknown[], Row>(`SELECT * FROM usage_minutes WHERE ${where.sql}`).all(...where.values).map(usageMinuteFromRow);
  }

  async countUsageMinutes(q: Omit<UsageQuery, 'limit' | 'after'>, cap: number): Promise<number> {
    const count = usageCountSql(q, cap, () => '?');
    return Number(this.db.prepare<unknown[], { n: number }>(count.sql).get(...count.values)!.n);
  }

  async pruneUsageMinutes(before: string): Promise<void> {
    this.stmts.pruneUsageMinutes.run(before);
  }

  // Issue 22: usage filters, alerts
  async sumUsageMinutes(q: Omit<UsageQuery, 'limit' | 'after'>): Promise<UsageSums> {
    const sum = usageSumSql(q, () => '?');
    const r = this.db.prepare<unknown[], Row>(sum.sql).get(...sum.values)!;
    return { requests: Number(r.requests), errors: Number(r.errors), computeUnits: Number(r.compute_units) };
  }

  async getAlertSettings(accountId: string): Promise<AlertSettings | undefined> {
    const r = this.db.prepare<[string], { settings: string }>('SELECT settings FROM alert_settings WHERE account_id = ?').get(accountId);
    return r ? (JSON.parse(r.settings) as AlertSettings) : undefined;
  }

  async putAlertSettings(accountId: string, settings: AlertSettings, updatedAt: string): Promise<void> {
    this.db.prepare(`INSERT INTO alert_settings (account_id, settings, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (account_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`).run(accountId, JSON.stringify(settings), isoTime(updatedAt));
  }

  async listAlertSettings(): Promise<Array<{ accountId: string; settings: AlertSettings }>> {
    return this.db.prepare<[], { account_id: string; settings: string }>('SELECT account_id, settings FROM alert_settings ORDER BY account_id').all()
      .map((r) => ({ accountId: r.account_id, settings: JSON.parse(r.settings) as AlertSettings }));
  }

  async claimAlert(a: FiredAlert): Promise<boolean> {
    return this.db.prepare(`INSERT INTO alerts_fired (account_id, kind, threshold, period, fired_at, value) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT DO NOTHING`).run(a.accountId, a.kind, a.threshold, a.period, isoTime(a.firedAt), a.value).changes === 1;
  }

  async closeAlert(accountId: string, kind: AlertKind, threshold: number): Promise<boolean> {
    return this.db.prepare(`UPDATE alerts_fired SET period = fired_at WHERE account_id = ? AND kind = ? AND threshold = ? AND period = 'open'`)
      .run(accountId, kind, threshold).changes > 0;
  }

  async listFiredAlerts(accountId: string, limit: number): Promise<FiredAlert[]> {
    return this.db.prepare<[string, number], Row>('SELECT * FROM alerts_fired WHERE account_id = ? ORDER BY fired_at DESC, kind, threshold LIMIT ?')
      .all(accountId, limit).map((r) => firedAlertFromRow(r, codec));
  }

  async rollupUsageHour(from: string, before: string): Promise<{ hour: string; removed: number } | undefined> {
    const first = this.db.prepare<[string, string], { minute: string }>('SELECT minute FROM usage_minutes WHERE minute >= ? AND minute < ? ORDER BY minute LIMIT 1').get(from, before);
    if (!first) return undefined;
    const { hour, next } = hourOf(first.minute);
    const sql = usageRollupSql('@h', '@n');
    const fold = this.db.prepare(sql.fold);
    const drop = this.db.prepare(sql.drop);
    const removed = this.db.transaction(() => { fold.run({ h: hour, n: next }); return drop.run({ h: hour, n: next }).changes; }).immediate();
    return { hour, removed };
  }

  // Issue 22: members, tokens, mail outbox

  async enqueueMail(m: NewOutboxMail): Promise<void> {
    const at = isoTime(m.createdAt);
    this.db.prepare(`INSERT INTO mail_outbox (id, to_addr, subject, body, created_at, next_attempt_at, attempts)
      VALUES (?, ?, ?, ?, ?, ?, 0)`).run(m.id, m.to, m.subject, m.body, at, at);
  }

  async claimMail(owner: string, now: string, leaseUntil: string, limit: number): Promise<OutboxMail[]> {
    const t = isoTime(now);
    const claim = this.db.transaction(() => {
      const rows = this.db.prepare<[string, string, number], Row>(`SELECT * FROM mail_outbox WHERE sent_at IS NULL AND body <> '' AND next_attempt_at <= ?
        AND (lease_until IS NULL OR lease_until <= ?) ORDER BY next_attempt_at, id LIMIT ?`).all(t, t, limit);
      const lease = this.db.prepare<[string, string, string]>('UPDATE mail_outbox SET lease_owner = ?, lease_until = ? WHERE id = ?');
      for (const r of rows) lease.run(owner, isoTime(leaseUntil), r.id as string);
      return rows.map((r) => mailFromRow(r, codec));
    });
    return claim.immediate();
  }

  async recordMailAttempt(id: string, owner: string, a: MailAttempt): Promise<void> {
    this.db.prepare(`UPDATE mail_outbox SET attempts = attempts + 1, last_error = @error,
        sent_at = CASE WHEN @sent = 1 THEN @at ELSE sent_at END,
        body = CASE WHEN @sent = 1 OR @giveUp = 1 THEN '' ELSE body END,
        next_attempt_at = @next, lease_owner = NULL, lease_until = NULL
      WHERE id = @id AND lease_owner = @owner`).run({ id, owner, error: a.error, sent: a.sent ? 1 : 0, giveUp: a.giveUp ? 1 : 0, at: isoTime(a.at), next: isoTime(a.nextAttemptAt) });
  }

  async listMail(limit: number): Promise<OutboxMail[]> {
    return this.db.prepare<[number], Row>('SELECT * FROM mail_outbox ORDER BY created_at DESC, id DESC LIMIT ?').all(limit).map((r) => mailFromRow(r, codec));
  }

  async pruneMail(before: string): Promise<number> {
    return this.db.prepare<[string]>("DELETE FROM mail_outbox WHERE created_at < ? AND (sent_at IS NOT NULL OR body = '')").run(isoTime(before)).changes;
  }

  async createWebhook(w: NewWebhook): Promise<Webhook> {
    const now = new Date().toISOString();
    this.stmts.insertWebhook.run(webhookParams({ ...w, disabledReason: null, createdAt: now, updatedAt: now }));
    return (await this.getWebhook(w.id))!;
  }

  async getWebhook(id: string): Promise<Webhook | undefined> {
    const r = this.stmts.webhook.get(id);
    return r && webhookFromRow(r, codec);
  }

  async listWebhooks(accountId?: string): Promise<Webhook[]> {
    const rows = accountId === undefined ? this.stmts.allWebhooks.all() : this.stmts.webhooksOf.all(accountId);
    return rows.map((r) => webhookFromRow(r, codec));
  }

  async updateWebhook(id: string, patch: WebhookPatch): Promise<Webhook | undefined> {
    const current = await this.getWebhook(id);
    if (!current) return undefined;
    const next = { ...current, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)), updatedAt: new Date().toISOString() };
    this.db.prepare(`UPDATE webhooks SET url = @url, options = @options, secret = @secret, status = @status, disabled_reason = @disabled_reason, updated_at = @updated_at WHERE id = @id`).run(webhookParams(next));
    return this.getWebhook(id);
  }

  async deleteWebhook(id: string): Promise<boolean> {
    return this.stmts.deleteWebhook.run(id).changes > 0;
  }

  async addWebhookEvents(events: readonly NewWebhookEvent[]): Promise<void> {
    if (events.length > 0) this.addWebhookEventsAll.immediate(events);
  }

  async claimWebhookEvents(owner: string, now: string, leaseUntil: string, limit: number): Promise<WebhookEvent[]> {
    return this.claimAll.immediate(owner, now, leaseUntil, limit);
  }

  async renewWebhookLeases(owner: string, ids: readonly string[], leaseUntil: string): Promise<number> {
    return ids.length === 0 ? 0 : this.stmts.renewWebhookLeases.run({ owner, ids: JSON.stringify(ids), leaseUntil }).changes;
  }

  async recordWebhookAttempt(id: string, owner: string, a: WebhookAttempt): Promise<void> {
    this.stmts.recordWebhookAttempt.run({
      id, owner, delivered: a.delivered ? 1 : 0, status: a.status, error: a.error, at: a.at, nextAttemptAt: a.nextAttemptAt,
      durationMs: a.durationMs ?? null, responseBody: a.responseBody ?? null,
    });
  }

  async listWebhookEvents(webhookId: string, limit: number): Promise<WebhookEvent[]> {
    return this.stmts.webhookEvents.all(webhookId, limit).map((r) => webhookEventFromRow(r, codec));
  }

  async pruneWebhookEvents(before: string): Promise<number> {
    return this.stmts.pruneWebhookEvents.run(isoTime(before)).changes;
  }

  async pruneWebhookTestEvents(before: string): Promise<number> {
    return this.db.prepare<[string]>("DELETE FROM webhook_events WHERE type = 'webhook.test' AND created_at < ?").run(isoTime(before)).changes;
  }

  async getWebhookEvents(ids: readonly string[]): Promise<WebhookEvent[]> {
    return ids.length === 0 ? [] : this.stmts.webhookEventsById.all(JSON.stringify(ids)).map((r) => webhookEventFromRow(r, codec));
  }

  async webhookStats(accountId?: string): Promise<WebhookStats[]> {
    const rows = accountId === undefined ? this.stmts.webhookStats.all() : this.stmts.webhookStatsOf.all(accountId);
    return rows.map((r) => webhookStatsFromRow(r, codec));
  }

  async getMeta(name: string): Promise<string | undefined> {
    return this.stmts.getMeta.get(name)?.value;
  }

  async setMeta(name: string, value: string): Promise<void> {
    this.stmts.setMeta.run(name, value);
  }

  async ping(): Promise<void> {
    this.stmts.ping.get();
  }

  /** The same connection as a Kysely database, for the stores that have moved to their domain. */
  sqlDb(): SqlDb {
    return SqlDb.sqlite(this.db);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
