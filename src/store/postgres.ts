import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Account, ApiKey, KeyContext, Member } from './model.ts';
import { accountConflict, keyConflict, memberConflict, rethrowConflict, type Violation } from './conflict.ts';
import { migratePostgres } from './postgres-migrations.ts';
import { SqlDb } from './sql/sql-db.ts';
import {
  ACCOUNT_COLUMNS, ACCOUNT_FIELDS, KEY_COLUMNS, KEY_FIELDS, PLAN_COLUMNS, accountFromRow, given, isoTime,
  keyFromRow, normalizeEmail, planFromRow, selectList, memberFromRow, tokenFromRow, usageBatch, usageMinuteFromRow, usageMinuteValues, usageWhere, usageCountSql, USAGE_MINUTE_COLUMNS, hourOf, usageRollupSql, revokedUsageSql, byAccount, type Codec, type Row, usageSumSql, firedAlertFromRow,
} from './rows.ts';
import type { AccountToken, MemberPatch, NewMember, AccountPatch, ApiKeyPatch, KeyPage, NewAccount, NewApiKey, Session, Store, UsageMinute, UsageQuery, AlertKind, AlertSettings, FiredAlert, UsageSums } from './store.ts';
import { groupKeyId } from './store.ts';

const codec: Codec = {
  bool: (v) => v === true,
  list: (v) => v as string[],
  time: (v) => (v instanceof Date ? v : new Date(v as string)).toISOString(),
  bigint: (v) => Number(v), // `pg` answers int8 as a string; quotas and usage stay far below 2^53.
};

/** PostgreSQL names the violated column in `detail`: `Key (email_normalized)=(...) already exists.` */
function violationOf(err: unknown): Violation | undefined {
  const { code, detail } = err as { code?: string; detail?: string };
  if (code === '23503') return { kind: 'reference' };
  if (code === '23505') return { kind: 'unique', column: /Key \((\w+)\)/.exec(detail ?? '')?.[1] ?? '' };
  return undefined;
}

const insertSql = (table: string, cols: readonly string[]) =>
  `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING *`;

// Static statements are named: `pg` prepares each once per connection (the key lookup is on the hot path).
const Q = {
  listPlans: 'SELECT * FROM plans ORDER BY cu_per_month, cu_per_second, id',
  plan: 'SELECT * FROM plans WHERE id = $1',
  insertPlan: insertSql('plans', PLAN_COLUMNS),
  deletePlan: 'DELETE FROM plans WHERE id = $1',
  listAccounts: 'SELECT * FROM accounts ORDER BY created_at, id',
  account: 'SELECT * FROM accounts WHERE id = $1',
  accountByEmail: 'SELECT * FROM accounts WHERE email_normalized = $1',
  insertAccount: insertSql('accounts', [...ACCOUNT_COLUMNS, 'email_normalized']),
  key: 'SELECT * FROM api_keys WHERE id = $1',
  keysOf: 'SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, id',
  keysPage: 'SELECT * FROM api_keys WHERE account_id = $1 AND (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT $4',
  activeKeys: 'SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL',
  keyContext: `SELECT ${selectList(KEY_COLUMNS, 'k', 'k_')}, ${selectList(ACCOUNT_COLUMNS, 'a', 'a_')}, ${selectList(PLAN_COLUMNS, 'p', 'p_')}
    FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN plans p ON p.id = a.plan_id WHERE k.hash = $1`,
  insertKey: insertSql('api_keys', KEY_COLUMNS),
  revokeKey: 'UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING *',
  // One statement for the whole batch; several instances may flush in any order, so last use only moves forward.
  touchKeys: `UPDATE api_keys k SET last_used_at = v.t FROM unnest($1::text[], $2::timestamptz[]) AS v (id, t)
    WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at < v.t)`,
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
  createSession: 'INSERT INTO sessions (id_hash, account_id, member_id, csrf, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)',
  session: 'SELECT * FROM sessions WHERE id_hash = $1 AND expires_at > now()',
  deleteSession: 'DELETE FROM sessions WHERE id_hash = $1',
  deleteSessionsOf: 'DELETE FROM sessions WHERE account_id = $1',
  trimSessions: `DELETE FROM sessions WHERE account_id = $1 AND (expires_at <= now() OR id_hash NOT IN
    (SELECT id_hash FROM sessions WHERE account_id = $1 AND expires_at > now() ORDER BY created_at DESC, id_hash DESC LIMIT $2))`,
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

  private async write(name: keyof typeof Q, values: unknown[], message: (v: Violation) => string): Promise<Row[]> {
    try {
      return await this.rows(name, values);
    } catch (err) {
      return rethrowConflict(err, violationOf(err), message);
    }
  }

  /** `UPDATE ... SET` only the given fields (column names come from the field maps, never from input). */
  private async update(table: string, id: string, set: [string, unknown][], message?: (v: Violation) => string): Promise<Row | undefined> {
    const text = `UPDATE ${table} SET ${set.map(([c], i) => `${c} = $${i + 2}`).join(', ')} WHERE id = $1 RETURNING *`;
    try {
      return (await this.pool.query<Row>(text, [id, ...set.map(([, v]) => v)])).rows[0];
    } catch (err) {
      if (!message) throw err;
      return rethrowConflict(err, violationOf(err), message);
    }
  }






  async listAccounts(): Promise<Account[]> {
    return (await this.rows('listAccounts')).map((r) => accountFromRow(r, codec));
  }

  async getAccount(id: string): Promise<Account | undefined> {
    const [row] = await this.rows('account', [id]);
    return row && accountFromRow(row, codec);
  }

  async getAccountByEmail(email: string): Promise<Account | undefined> {
    const [row] = await this.rows('accountByEmail', [normalizeEmail(email)]);
    return row && accountFromRow(row, codec);
  }

  async createAccount(a: NewAccount): Promise<Account> {
    const now = new Date().toISOString();
    const values = [a.id, a.name, a.email, a.passwordHash, a.status, a.role, a.planId, now, now, normalizeEmail(a.email)];
    return accountFromRow((await this.write('insertAccount', values, accountConflict(a)))[0], codec);
  }

  async updateAccount(id: string, patch: AccountPatch): Promise<Account | undefined> {
    const fields = given(patch, ACCOUNT_FIELDS);
    const set = Object.entries(fields).map(([f, v]): [string, unknown] => [ACCOUNT_FIELDS[f as keyof AccountPatch], v]);
    if (fields.email !== undefined) set.push(['email_normalized', normalizeEmail(fields.email)]);
    const row = await this.update('accounts', id, [...set, ['updated_at', new Date().toISOString()]], accountConflict({ ...patch, id }));
    return row && accountFromRow(row, codec);
  }

  async insertKey(k: NewApiKey): Promise<ApiKey> {
    const values = [
      k.id, k.accountId, k.name, k.type, k.permissions, k.prefix, k.hash, k.ipAllowlist, k.originAllowlist,
      k.networkAllowlist, k.methodAllowlist, k.expiresAt && isoTime(k.expiresAt), new Date().toISOString(), null, null, k.createdBy ?? null,
    ];
    return keyFromRow((await this.write('insertKey', values, keyConflict(k)))[0], codec);
  }

  async getKey(id: string): Promise<ApiKey | undefined> {
    const [row] = await this.rows('key', [id]);
    return row && keyFromRow(row, codec);
  }

  async listKeys(accountId: string, page?: KeyPage): Promise<ApiKey[]> {
    const rows = page
      ? await this.rows('keysPage', [accountId, page.after?.createdAt ?? '-infinity', page.after?.id ?? '', page.limit])
      : await this.rows('keysOf', [accountId]);
    return rows.map((r) => keyFromRow(r, codec));
  }

  async countActiveKeys(accountId: string): Promise<number> {
    return (await this.rows('activeKeys', [accountId]))[0].n as number;
  }

  async findKeyByHash(hash: string): Promise<KeyContext | undefined> {
    const [row] = await this.rows('keyContext', [hash]);
    if (!row) return undefined;
    return { key: keyFromRow(row, codec, 'k_'), account: accountFromRow(row, codec, 'a_'), plan: planFromRow(row, codec, 'p_') };
  }

  async updateKey(id: string, patch: ApiKeyPatch): Promise<ApiKey | undefined> {
    const fields = given(patch, KEY_FIELDS);
    if (fields.expiresAt) fields.expiresAt = isoTime(fields.expiresAt);
    const set = Object.entries(fields).map(([f, v]): [string, unknown] => [KEY_FIELDS[f as keyof ApiKeyPatch], v]);
    if (set.length === 0) return this.getKey(id);
    const row = await this.update('api_keys', id, set);
    return row && keyFromRow(row, codec);
  }

  async revokeKey(id: string): Promise<ApiKey | undefined> {
    const [row] = await this.rows('revokeKey', [id, new Date().toISOString()]);
    return row && keyFromRow(row, codec);
  }

  async touchKeys(lastUsed: ReadonlyMap<string, string>): Promise<void> {
    if (lastUsed.size === 0) return;
    await this.rows('touchKeys', [[...lastUsed.keys()], [...lastUsed.values()].map(isoTime)]);
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

  async pruneRevokedKeys(revokedBefore: string, limit: number): Promise<number> {
    const keys = (await this.pool.query<{ id: string; account_id: string }>(
      'SELECT id, account_id FROM api_keys WHERE revoked_at IS NOT NULL AND revoked_at < $1 ORDER BY revoked_at LIMIT $2', [revokedBefore, limit])).rows;
    if (keys.length === 0) return 0;
    const sql = revokedUsageSql('$1::text', 'key_id = ANY($2::text[])', '$3::text');
    await this.transaction(async (c) => {
      for (const [a, ids] of byAccount(keys)) {
        await c.query(sql.fold, [a, ids, groupKeyId('(revoked)', a)]);
        await c.query(sql.drop, [a, ids]);
      }
      await c.query('DELETE FROM api_keys WHERE id = ANY($1::text[])', [keys.map((k) => k.id)]);
    });
    return keys.length;
  }

  async pruneSessions(now: string): Promise<number> {
    return (await this.pool.query('DELETE FROM sessions WHERE expires_at <= $1', [now])).rowCount ?? 0;
  }

  async createSession(s: Session): Promise<void> {
    await this.rows('createSession', [s.idHash, s.accountId, s.memberId ?? null, s.csrf, s.createdAt, s.expiresAt]);
  }

  async getSession(idHash: string): Promise<Session | undefined> {
    const [r] = await this.rows('session', [idHash]);
    return r && { idHash: r.id_hash as string, accountId: r.account_id as string, memberId: (r.member_id as string | null) ?? null, csrf: r.csrf as string, createdAt: codec.time(r.created_at), expiresAt: codec.time(r.expires_at) };
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.rows('deleteSession', [idHash]);
  }

  async deleteSessionsOf(accountId: string, memberId?: string | null): Promise<void> {
    if (memberId === undefined) await this.rows('deleteSessionsOf', [accountId]);
    else if (memberId === null) await this.pool.query('DELETE FROM sessions WHERE account_id = $1 AND member_id IS NULL', [accountId]);
    else await this.pool.query('DELETE FROM sessions WHERE account_id = $1 AND member_id = $2', [accountId, memberId]);
  }

  async trimSessions(accountId: string, keep: number): Promise<void> {
    await this.rows('trimSessions', [accountId, keep]);
  }

  // Issue 22: members, tokens, mail outbox

  async createMember(m: NewMember): Promise<Member> {
    const now = new Date().toISOString();
    try {
      const { rows } = await this.pool.query<Row>(`INSERT INTO members (id, account_id, email, email_normalized, name, password_hash, role, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING *`, [m.id, m.accountId, m.email, normalizeEmail(m.email), m.name, m.passwordHash, m.role, now]);
      return memberFromRow(rows[0], codec);
    } catch (err) {
      return rethrowConflict(err, violationOf(err), memberConflict(m));
    }
  }

  async getMember(id: string): Promise<Member | undefined> {
    const [r] = (await this.pool.query<Row>('SELECT * FROM members WHERE id = $1', [id])).rows;
    return r && memberFromRow(r, codec);
  }

  async getMemberByEmail(email: string): Promise<Member | undefined> {
    const [r] = (await this.pool.query<Row>('SELECT * FROM members WHERE email_normalized = $1', [normalizeEmail(email)])).rows;
    return r && memberFromRow(r, codec);
  }

  async listMembers(accountId: string): Promise<Member[]> {
    return (await this.pool.query<Row>('SELECT * FROM members WHERE account_id = $1 ORDER BY created_at, id', [accountId])).rows.map((r) => memberFromRow(r, codec));
  }

  async updateMember(id: string, p: MemberPatch): Promise<Member | undefined> {
    const [r] = (await this.pool.query<Row>(`UPDATE members SET name = coalesce($2, name), role = coalesce($3, role),
      password_hash = CASE WHEN $4::boolean THEN $5 ELSE password_hash END, updated_at = now() WHERE id = $1 RETURNING *`,
    [id, p.name ?? null, p.role ?? null, p.passwordHash !== undefined, p.passwordHash ?? null])).rows;
    return r && memberFromRow(r, codec);
  }

  async deleteMember(id: string): Promise<boolean> {
    return ((await this.pool.query('DELETE FROM members WHERE id = $1', [id])).rowCount ?? 0) > 0;
  }

  async revokeKeysMadeBy(memberId: string): Promise<number> {
    return (await this.pool.query('UPDATE api_keys SET revoked_at = now() WHERE created_by = $1 AND revoked_at IS NULL', [memberId])).rowCount ?? 0;
  }

  async createAccountToken(t: AccountToken): Promise<void> {
    await this.pool.query(`INSERT INTO account_tokens (id_hash, id, kind, account_id, member_id, email, role, created_at, expires_at, used_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, [t.idHash, t.id, t.kind, t.accountId, t.memberId, t.email, t.role, t.createdAt, t.expiresAt, t.usedAt]);
  }

  async consumeAccountToken(idHash: string, kind: AccountToken['kind'], now: string): Promise<AccountToken | undefined> {
    const [r] = (await this.pool.query<Row>(`UPDATE account_tokens SET used_at = $3::timestamptz
      WHERE id_hash = $1 AND kind = $2 AND used_at IS NULL AND expires_at > $3::timestamptz RETURNING *`, [idHash, kind, now])).rows;
    return r && tokenFromRow(r, codec);
  }

  async listInvitations(accountId: string, now: string): Promise<AccountToken[]> {
    return (await this.pool.query<Row>(`SELECT * FROM account_tokens WHERE account_id = $1 AND kind = 'invite' AND used_at IS NULL AND expires_at > $2::timestamptz
      ORDER BY created_at, id`, [accountId, now])).rows.map((r) => tokenFromRow(r, codec));
  }

  async deleteInvitation(accountId: string, id: string): Promise<boolean> {
    return ((await this.pool.query("DELETE FROM account_tokens WHERE account_id = $1 AND id = $2 AND kind = 'invite' AND used_at IS NULL", [accountId, id])).rowCount ?? 0) > 0;
  }

  async pruneAccountTokens(before: string): Promise<number> {
    return (await this.pool.query('DELETE FROM account_tokens WHERE expires_at < $1 OR used_at < $1', [before])).rowCount ?? 0;
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
