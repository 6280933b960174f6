import type Database from 'better-sqlite3';
import type { Account, ApiKey, KeyContext, Member } from './model.ts';
import { accountConflict, keyConflict, memberConflict, rethrowConflict, type Violation } from './conflict.ts';
import {
  ACCOUNT_COLUMNS, ACCOUNT_FIELDS, KEY_COLUMNS, KEY_FIELDS, PLAN_COLUMNS, accountFromRow, given, isoTime, keyFromRow, normalizeEmail, planFromRow,
  selectList, memberFromRow, tokenFromRow, mailFromRow, revokedUsageSql, byAccount, WEBHOOK_COLUMNS, webhookEventFromRow, webhookFromRow, webhookStatsFromRow, type Codec, type Row,
} from './rows.ts';
import { openSqlite } from './sqlite-open.ts';
import { SqlDb } from './sql/sql-db.ts';
import { groupKeyId } from './store.ts';
import type { AccountToken, MailAttempt, MemberPatch, NewMember, NewOutboxMail, OutboxMail, AccountPatch, ApiKeyPatch, KeyPage, NewAccount, NewApiKey, Session, Store, NewWebhook, NewWebhookEvent, Webhook, WebhookAttempt, WebhookEvent, WebhookPatch, WebhookStats } from './store.ts';

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
const accountParams = (a: Account) => ({
  id: a.id, name: a.name, email: a.email, email_normalized: normalizeEmail(a.email), password_hash: a.passwordHash,
  status: a.status, role: a.role, plan_id: a.planId, created_at: a.createdAt, updated_at: a.updatedAt,
});
const keyParams = (k: Omit<ApiKey, 'createdBy'> & { createdBy?: string | null }) => ({
  id: k.id, account_id: k.accountId, name: k.name, type: k.type, permissions: JSON.stringify(k.permissions),
  prefix: k.prefix, hash: k.hash, ip_allowlist: JSON.stringify(k.ipAllowlist),
  origin_allowlist: JSON.stringify(k.originAllowlist), network_allowlist: JSON.stringify(k.networkAllowlist),
  method_allowlist: JSON.stringify(k.methodAllowlist), expires_at: k.expiresAt && isoTime(k.expiresAt),
  created_at: k.createdAt, last_used_at: k.lastUsedAt, revoked_at: k.revokedAt, created_by: k.createdBy ?? null,
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

/** better-sqlite3 reports constraint failures by code, and names the column in the message. */
function violationOf(err: unknown): Violation | undefined {
  const { code, message } = err as { code?: string; message?: string };
  if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return { kind: 'reference' };
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    return { kind: 'unique', column: /\.(\w+)$/.exec(message ?? '')?.[1] ?? '' };
  }
  return undefined;
}

/** The embedded default store: one SQLite file in WAL mode (crash-safe, readers never block the writer). */
export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly stmts;
  private readonly touchAll;
  private readonly addWebhookEventsAll;
  private readonly claimAll;
  private readonly updates;

  constructor(file: string) {
    this.db = openSqlite(file);
    const db = this.db;
    const accountCols = [...ACCOUNT_COLUMNS, 'email_normalized'];
    this.stmts = {
      listPlans: db.prepare<[], Row>('SELECT * FROM plans ORDER BY cu_per_month, cu_per_second, id'),
      plan: db.prepare<[string], Row>('SELECT * FROM plans WHERE id = ?'),
      insertPlan: db.prepare(insertSql('plans', PLAN_COLUMNS)),
      updatePlan: db.prepare(updateSql('plans', PLAN_COLUMNS)),
      deletePlan: db.prepare<[string]>('DELETE FROM plans WHERE id = ?'),
      listAccounts: db.prepare<[], Row>('SELECT * FROM accounts ORDER BY created_at, id'),
      account: db.prepare<[string], Row>('SELECT * FROM accounts WHERE id = ?'),
      accountByEmail: db.prepare<[string], Row>('SELECT * FROM accounts WHERE email_normalized = ?'),
      insertAccount: db.prepare(insertSql('accounts', accountCols)),
      updateAccount: db.prepare(updateSql('accounts', accountCols)),
      key: db.prepare<[string], Row>('SELECT * FROM api_keys WHERE id = ?'),
      keysOf: db.prepare<[string], Row>('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id'),
      keysPage: db.prepare<[string, string, string, number], Row>('SELECT * FROM api_keys WHERE account_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?'),
      activeKeys: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NULL'),
      keyContext: db.prepare<[string], Row>(
        `SELECT ${selectList(KEY_COLUMNS, 'k', 'k_')}, ${selectList(ACCOUNT_COLUMNS, 'a', 'a_')}, ${selectList(PLAN_COLUMNS, 'p', 'p_')}
         FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN plans p ON p.id = a.plan_id WHERE k.hash = ?`,
      ),
      insertKey: db.prepare(insertSql('api_keys', KEY_COLUMNS)),
      updateKey: db.prepare(updateSql('api_keys', KEY_COLUMNS)),
      revokeKey: db.prepare<[string, string], Row>('UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? RETURNING *'),
      // Several instances may flush in any order: last use only moves forward.
      touchKey: db.prepare('UPDATE api_keys SET last_used_at = @t WHERE id = @id AND (last_used_at IS NULL OR last_used_at < @t)'),
      createSession: db.prepare('INSERT INTO sessions (id_hash, account_id, member_id, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)'),
      session: db.prepare<[string, string], Row>('SELECT * FROM sessions WHERE id_hash = ? AND expires_at > ?'),
      deleteSession: db.prepare<[string]>('DELETE FROM sessions WHERE id_hash = ?'),
      deleteSessionsOf: db.prepare<[string]>('DELETE FROM sessions WHERE account_id = ?'),
      trimSessions: db.prepare<[string, string, string, string, number]>(`DELETE FROM sessions WHERE account_id = ? AND (expires_at <= ? OR id_hash NOT IN
        (SELECT id_hash FROM sessions WHERE account_id = ? AND expires_at > ? ORDER BY created_at DESC, id_hash DESC LIMIT ?))`),
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
    this.touchAll = db.transaction((lastUsed: ReadonlyMap<string, string>) => {
      for (const [id, t] of lastUsed) stmts.touchKey.run({ id, t: isoTime(t) });
    });
    this.addWebhookEventsAll = db.transaction((events: readonly NewWebhookEvent[]) => {
      for (const e of events) stmts.addWebhookEvent.run(e);
    });
    this.claimAll = db.transaction((owner: string, now: string, leaseUntil: string, limit: number) => {
      const rows = stmts.dueWebhookEvents.all({ now, limit });
      for (const r of rows) stmts.leaseWebhookEvent.run(owner, leaseUntil, r.id);
      return rows.map((r) => webhookEventFromRow({ ...r, lease_owner: owner, lease_until: leaseUntil }, codec));
    });
    // Read, merge, write in one IMMEDIATE transaction: no lost update against another writer of the file
    // (the CLI while the server runs), and one prepared statement per table whatever the patch.
    const now = () => new Date().toISOString();
    this.updates = {
      account: db.transaction((id: string, patch: AccountPatch): Account | undefined => {
        const row = stmts.account.get(id);
        if (!row) return undefined;
        const next = accountParams({ ...accountFromRow(row, codec), ...given(patch, ACCOUNT_FIELDS), updatedAt: now() });
        this.write(() => stmts.updateAccount.run(next), accountConflict({ ...patch, id }));
        return accountFromRow(stmts.account.get(id)!, codec);
      }),
      key: db.transaction((id: string, patch: ApiKeyPatch): ApiKey | undefined => {
        const row = stmts.key.get(id);
        if (!row) return undefined;
        stmts.updateKey.run(keyParams({ ...keyFromRow(row, codec), ...given(patch, KEY_FIELDS) }));
        return keyFromRow(stmts.key.get(id)!, codec);
      }),
    };
  }

  /** Runs a write, turning constraint failures into StoreConflictError. */
  private write<T>(run: () => T, message: (v: Violation) => string): T {
    try {
      return run();
    } catch (err) {
      return rethrowConflict(err, violationOf(err), message);
    }
  }






  async listAccounts(): Promise<Account[]> {
    return this.stmts.listAccounts.all().map((r) => accountFromRow(r, codec));
  }

  async getAccount(id: string): Promise<Account | undefined> {
    const row = this.stmts.account.get(id);
    return row && accountFromRow(row, codec);
  }

  async getAccountByEmail(email: string): Promise<Account | undefined> {
    const row = this.stmts.accountByEmail.get(normalizeEmail(email));
    return row && accountFromRow(row, codec);
  }

  async createAccount(account: NewAccount): Promise<Account> {
    const now = new Date().toISOString();
    const row = accountParams({ ...account, createdAt: now, updatedAt: now });
    this.write(() => this.stmts.insertAccount.run(row), accountConflict(account));
    return (await this.getAccount(account.id))!;
  }

  async updateAccount(id: string, patch: AccountPatch): Promise<Account | undefined> {
    return this.updates.account.immediate(id, patch);
  }

  async insertKey(key: NewApiKey): Promise<ApiKey> {
    const row = keyParams({ ...key, createdAt: new Date().toISOString(), lastUsedAt: null, revokedAt: null });
    this.write(() => this.stmts.insertKey.run(row), keyConflict(key));
    return (await this.getKey(key.id))!;
  }

  async getKey(id: string): Promise<ApiKey | undefined> {
    const row = this.stmts.key.get(id);
    return row && keyFromRow(row, codec);
  }

  async listKeys(accountId: string, page?: KeyPage): Promise<ApiKey[]> {
    const rows = page
      ? this.stmts.keysPage.all(accountId, page.after?.createdAt ?? '', page.after?.id ?? '', page.limit)
      : this.stmts.keysOf.all(accountId);
    return rows.map((r) => keyFromRow(r, codec));
  }

  async countActiveKeys(accountId: string): Promise<number> {
    return this.stmts.activeKeys.get(accountId)!.n;
  }

  async findKeyByHash(hash: string): Promise<KeyContext | undefined> {
    const row = this.stmts.keyContext.get(hash);
    if (!row) return undefined;
    return { key: keyFromRow(row, codec, 'k_'), account: accountFromRow(row, codec, 'a_'), plan: planFromRow(row, codec, 'p_') };
  }

  async updateKey(id: string, patch: ApiKeyPatch): Promise<ApiKey | undefined> {
    return this.updates.key.immediate(id, patch);
  }

  async revokeKey(id: string): Promise<ApiKey | undefined> {
    const row = this.stmts.revokeKey.get(new Date().toISOString(), id);
    return row && keyFromRow(row, codec);
  }

  async touchKeys(lastUsed: ReadonlyMap<string, string>): Promise<void> {
    if (lastUsed.size > 0) this.touchAll(lastUsed);
  }

  async pruneRevokedKeys(revokedBefore: string, limit: number): Promise<number> {
    const keys = this.db.prepare<[string, number], { id: string; account_id: string }>(
      'SELECT id, account_id FROM api_keys WHERE revoked_at IS NOT NULL AND revoked_at < ? ORDER BY revoked_at LIMIT ?').all(isoTime(revokedBefore), limit);
    if (keys.length === 0) return 0;
    const sql = revokedUsageSql('@a', 'key_id IN (SELECT value FROM json_each(@keys))', '@group');
    const fold = this.db.prepare(sql.fold);
    const drop = this.db.prepare(sql.drop);
    const dropKeys = this.db.prepare<[string]>('DELETE FROM api_keys WHERE id IN (SELECT value FROM json_each(?))');
    this.db.transaction(() => {
      for (const [a, ids] of byAccount(keys)) {
        const p = { a, keys: JSON.stringify(ids), group: groupKeyId('(revoked)', a) };
        fold.run(p);
        drop.run({ a, keys: p.keys });
      }
      dropKeys.run(JSON.stringify(keys.map((k) => k.id)));
    }).immediate();
    return keys.length;
  }

  async pruneSessions(now: string): Promise<number> {
    return this.db.prepare<[string]>('DELETE FROM sessions WHERE expires_at <= ?').run(isoTime(now)).changes;
  }

  async createSession(s: Session): Promise<void> {
    this.stmts.createSession.run(s.idHash, s.accountId, s.memberId ?? null, s.csrf, s.createdAt, s.expiresAt);
  }

  async getSession(idHash: string): Promise<Session | undefined> {
    const r = this.stmts.session.get(idHash, new Date().toISOString());
    return r && { idHash: r.id_hash as string, accountId: r.account_id as string, memberId: (r.member_id as string | null) ?? null, csrf: r.csrf as string, createdAt: r.created_at as string, expiresAt: r.expires_at as string };
  }

  async deleteSession(idHash: string): Promise<void> {
    this.stmts.deleteSession.run(idHash);
  }

  async deleteSessionsOf(accountId: string, memberId?: string | null): Promise<void> {
    if (memberId === undefined) this.stmts.deleteSessionsOf.run(accountId);
    else if (memberId === null) this.db.prepare<[string]>('DELETE FROM sessions WHERE account_id = ? AND member_id IS NULL').run(accountId);
    else this.db.prepare<[string, string]>('DELETE FROM sessions WHERE account_id = ? AND member_id = ?').run(accountId, memberId);
  }

  async trimSessions(accountId: string, keep: number): Promise<void> {
    const now = new Date().toISOString();
    this.stmts.trimSessions.run(accountId, now, accountId, now, keep);
  }

  // Issue 22: members, tokens, mail outbox

  async createMember(m: NewMember): Promise<Member> {
    const now = new Date().toISOString();
    this.write(() => this.db.prepare(`INSERT INTO members (id, account_id, email, email_normalized, name, password_hash, role, created_at, updated_at)
      VALUES (@id, @accountId, @email, @normalized, @name, @passwordHash, @role, @now, @now)`).run({ ...m, normalized: normalizeEmail(m.email), now }), memberConflict(m));
    return (await this.getMember(m.id))!;
  }

  async getMember(id: string): Promise<Member | undefined> {
    const r = this.db.prepare<[string], Row>('SELECT * FROM members WHERE id = ?').get(id);
    return r && memberFromRow(r, codec);
  }

  async getMemberByEmail(email: string): Promise<Member | undefined> {
    const r = this.db.prepare<[string], Row>('SELECT * FROM members WHERE email_normalized = ?').get(normalizeEmail(email));
    return r && memberFromRow(r, codec);
  }

  async listMembers(accountId: string): Promise<Member[]> {
    return this.db.prepare<[string], Row>('SELECT * FROM members WHERE account_id = ? ORDER BY created_at, id').all(accountId).map((r) => memberFromRow(r, codec));
  }

  async updateMember(id: string, patch: MemberPatch): Promise<Member | undefined> {
    const current = await this.getMember(id);
    if (!current) return undefined;
    const next = { ...current, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)), updatedAt: new Date().toISOString() };
    this.db.prepare('UPDATE members SET name = @name, role = @role, password_hash = @passwordHash, updated_at = @updatedAt WHERE id = @id').run(next);
    return this.getMember(id);
  }

  async deleteMember(id: string): Promise<boolean> {
    return this.db.prepare<[string]>('DELETE FROM members WHERE id = ?').run(id).changes > 0;
  }

  async revokeKeysMadeBy(memberId: string): Promise<number> {
    return this.db.prepare<[string, string]>('UPDATE api_keys SET revoked_at = ? WHERE created_by = ? AND revoked_at IS NULL')
      .run(new Date().toISOString(), memberId).changes;
  }

  async createAccountToken(t: AccountToken): Promise<void> {
    this.db.prepare(`INSERT INTO account_tokens (id_hash, id, kind, account_id, member_id, email, role, created_at, expires_at, used_at)
      VALUES (@idHash, @id, @kind, @accountId, @memberId, @email, @role, @createdAt, @expiresAt, @usedAt)`).run({ ...t, createdAt: isoTime(t.createdAt), expiresAt: isoTime(t.expiresAt) });
  }

  async consumeAccountToken(idHash: string, kind: AccountToken['kind'], now: string): Promise<AccountToken | undefined> {
    const r = this.db.prepare<{ idHash: string; kind: string; now: string }, Row>(`UPDATE account_tokens SET used_at = @now
      WHERE id_hash = @idHash AND kind = @kind AND used_at IS NULL AND expires_at > @now RETURNING *`).get({ idHash, kind, now: isoTime(now) });
    return r && tokenFromRow(r, codec);
  }

  async listInvitations(accountId: string, now: string): Promise<AccountToken[]> {
    return this.db.prepare<[string, string], Row>(`SELECT * FROM account_tokens WHERE account_id = ? AND kind = 'invite' AND used_at IS NULL AND expires_at > ?
      ORDER BY created_at, id`).all(accountId, isoTime(now)).map((r) => tokenFromRow(r, codec));
  }

  async deleteInvitation(accountId: string, id: string): Promise<boolean> {
    return this.db.prepare<[string, string]>("DELETE FROM account_tokens WHERE account_id = ? AND id = ? AND kind = 'invite' AND used_at IS NULL").run(accountId, id).changes > 0;
  }

  async pruneAccountTokens(before: string): Promise<number> {
    const t = isoTime(before);
    return this.db.prepare<[string, string]>('DELETE FROM account_tokens WHERE expires_at < ? OR used_at < ?').run(t, t).changes;
  }

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

  /** The same connection as a Kysely database, for the stores that have moved to their domain. */
  sqlDb(): SqlDb {
    return SqlDb.sqlite(this.db);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
