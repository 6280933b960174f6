import pg from 'pg';
import type { Account, ApiKey, KeyContext, Member } from './model.ts';
import { accountConflict, keyConflict, memberConflict, rethrowConflict, type Violation } from './conflict.ts';
import { migratePostgres } from './migrations/migrate-postgres.ts';
import { SqlDb } from './sql/sql-db.ts';
import {
  ACCOUNT_COLUMNS, ACCOUNT_FIELDS, KEY_COLUMNS, KEY_FIELDS, PLAN_COLUMNS, accountFromRow, given, isoTime,
  keyFromRow, normalizeEmail, planFromRow, selectList, memberFromRow, tokenFromRow, mailFromRow, revokedUsageSql, byAccount, webhookEventFromRow, webhookFromRow, webhookStatsFromRow, type Codec, type Row,
} from './rows.ts';
import type { AccountToken, MailAttempt, MemberPatch, NewMember, NewOutboxMail, OutboxMail, AccountPatch, ApiKeyPatch, KeyPage, NewAccount, NewApiKey, Session, Store, NewWebhook, NewWebhookEvent, Webhook, WebhookAttempt, WebhookEvent, WebhookPatch, WebhookStats } from './store.ts';
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

/** A webhook's counters, its backlog's oldest event (first in the index webhook_events_waiting) and mean delivery time. */
export const WEBHOOK_STATS_SQL = `SELECT c.webhook_id, c.events, c.delivered, c.events - c.delivered AS pending, c.attempts,
    CASE WHEN c.events > c.delivered THEN (SELECT e.created_at FROM webhook_events e WHERE e.webhook_id = c.webhook_id AND e.status = 'pending' ORDER BY e.created_at LIMIT 1) END AS oldest_pending,
    CASE WHEN c.delivered > 0 THEN c.delivery_ms_sum::float8 / c.delivered END AS mean_ms
  FROM webhook_counters c JOIN webhooks w ON w.id = c.webhook_id`;

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
  createSession: 'INSERT INTO sessions (id_hash, account_id, member_id, csrf, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)',
  session: 'SELECT * FROM sessions WHERE id_hash = $1 AND expires_at > now()',
  deleteSession: 'DELETE FROM sessions WHERE id_hash = $1',
  deleteSessionsOf: 'DELETE FROM sessions WHERE account_id = $1',
  trimSessions: `DELETE FROM sessions WHERE account_id = $1 AND (expires_at <= now() OR id_hash NOT IN
    (SELECT id_hash FROM sessions WHERE account_id = $1 AND expires_at > now() ORDER BY created_at DESC, id_hash DESC LIMIT $2))`,
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
