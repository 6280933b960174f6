import type Database from 'better-sqlite3';
import type { Account, ApiKey, KeyContext, Member } from './model.ts';
import { accountConflict, keyConflict, memberConflict, rethrowConflict, type Violation } from './conflict.ts';
import {
  ACCOUNT_COLUMNS, ACCOUNT_FIELDS, KEY_COLUMNS, KEY_FIELDS, PLAN_COLUMNS, accountFromRow, given, isoTime, keyFromRow, normalizeEmail, planFromRow,
  selectList, memberFromRow, tokenFromRow, usageBatch, usageMinuteFromRow, usageMinuteValues, usageWhere, usageCountSql, USAGE_MINUTE_COLUMNS, hourOf, usageRollupSql, revokedUsageSql, byAccount, type Codec, type Row, usageSumSql, firedAlertFromRow,
} from './rows.ts';
import { openSqlite } from './sqlite-open.ts';
import { SqlDb } from './sql/sql-db.ts';
import { groupKeyId } from './store.ts';
import type { AccountToken, MemberPatch, NewMember, AccountPatch, ApiKeyPatch, KeyPage, NewAccount, NewApiKey, Session, Store, UsageMinute, UsageQuery, AlertKind, AlertSettings, FiredAlert, UsageSums } from './store.ts';

const codec: Codec = {
  bool: (v) => v === 1,
  list: (v) => JSON.parse(v as string) as string[],
  time: (v) => v as string,
  bigint: (v) => Number(v),
};

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
  private readonly addUsageAll;
  private readonly addUsageMinutesAll;
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
      createSession: db.prepare('INSERT INTO sessions (id_hash, account_id, member_id, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)'),
      session: db.prepare<[string, string], Row>('SELECT * FROM sessions WHERE id_hash = ? AND expires_at > ?'),
      deleteSession: db.prepare<[string]>('DELETE FROM sessions WHERE id_hash = ?'),
      deleteSessionsOf: db.prepare<[string]>('DELETE FROM sessions WHERE account_id = ?'),
      trimSessions: db.prepare<[string, string, string, string, number]>(`DELETE FROM sessions WHERE account_id = ? AND (expires_at <= ? OR id_hash NOT IN
        (SELECT id_hash FROM sessions WHERE account_id = ? AND expires_at > ? ORDER BY created_at DESC, id_hash DESC LIMIT ?))`),
    };
    const { stmts } = this;
    this.touchAll = db.transaction((lastUsed: ReadonlyMap<string, string>) => {
      for (const [id, t] of lastUsed) stmts.touchKey.run({ id, t: isoTime(t) });
    });
    this.addUsageMinutesAll = db.transaction((rows: readonly UsageMinute[], batchId?: string) => {
      if (batchId !== undefined && !this.firstTime(batchId)) return;
      for (const r of rows) stmts.addUsageMinute.run(...usageMinuteValues(r));
    });
    // With a batch id, once: a batch whose id is already there adds nothing (see postgres.ts addUsage).
    this.addUsageAll = db.transaction((month: string, ids: string[], units: number[], batchId?: string) => {
      if (batchId !== undefined && !this.firstTime(batchId)) return;
      ids.forEach((id, i) => stmts.addUsage.run({ id, month, units: units[i] }));
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
