import pg from 'pg';
import type { Account, ApiKey, KeyContext, Plan } from '../accounts/model.ts';
import { accountConflict, keyConflict, planConflict, rethrowConflict, type Violation } from './conflict.ts';
import { migratePostgres } from './postgres-migrations.ts';
import {
  ACCOUNT_COLUMNS, ACCOUNT_FIELDS, KEY_COLUMNS, KEY_FIELDS, PLAN_COLUMNS, PLAN_FIELDS, accountFromRow, given, isoTime,
  keyFromRow, normalizeEmail, planFromRow, selectList, usageBatch, type Codec, type Row,
} from './rows.ts';
import type { AccountPatch, ApiKeyPatch, KeyPage, NewAccount, NewApiKey, NewPlan, PlanPatch, Store } from './store.ts';

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
  addUsage: `INSERT INTO usage (account_id, month, compute_units)
    SELECT v.id, $1, v.units FROM unnest($2::text[], $3::bigint[]) WITH ORDINALITY AS v (id, units, n)
    JOIN accounts a ON a.id = v.id ORDER BY v.n
    ON CONFLICT (account_id, month) DO UPDATE SET compute_units = usage.compute_units + excluded.compute_units`,
  usage: 'SELECT compute_units FROM usage WHERE account_id = $1 AND month = $2',
  getMeta: 'SELECT value FROM meta WHERE name = $1',
  setMeta: 'INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
  ping: 'SELECT 1',
} as const;

/** The store for several instances sharing one database (`DATABASE_URL`). */
export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  private closed = false;

  private constructor(private readonly pool: pg.Pool) {}

  /** Connects and brings the schema up to date; safe when several instances start at once. */
  static async open(url: string): Promise<PostgresStore> {
    const pool = new pg.Pool({ connectionString: url });
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

  async listPlans(): Promise<Plan[]> {
    return (await this.rows('listPlans')).map((r) => planFromRow(r, codec));
  }

  async getPlan(id: string): Promise<Plan | undefined> {
    const [row] = await this.rows('plan', [id]);
    return row && planFromRow(row, codec);
  }

  async createPlan(p: NewPlan): Promise<Plan> {
    const now = new Date().toISOString();
    const values = [p.id, p.name, p.cuPerSecond, p.cuPerMonth, p.maxBatchSize, p.debugMethods, p.maxFilters, now, now];
    return planFromRow((await this.write('insertPlan', values, planConflict(p.id)))[0], codec);
  }

  async updatePlan(id: string, patch: PlanPatch): Promise<Plan | undefined> {
    const set = Object.entries(given(patch, PLAN_FIELDS)).map(([f, v]): [string, unknown] => [PLAN_FIELDS[f as keyof PlanPatch], v]);
    const row = await this.update('plans', id, [...set, ['updated_at', new Date().toISOString()]]);
    return row && planFromRow(row, codec);
  }

  async deletePlan(id: string): Promise<boolean> {
    try {
      return ((await this.pool.query({ name: 'deletePlan', text: Q.deletePlan, values: [id] })).rowCount ?? 0) > 0;
    } catch (err) {
      return rethrowConflict(err, violationOf(err), planConflict(id));
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
      k.networkAllowlist, k.methodAllowlist, k.expiresAt && isoTime(k.expiresAt), new Date().toISOString(), null, null,
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

  async addUsage(month: string, byAccount: ReadonlyMap<string, number>): Promise<void> {
    const { ids, units } = usageBatch(month, byAccount);
    if (ids.length > 0) await this.rows('addUsage', [month, ids, units]);
  }

  async getUsage(accountId: string, month: string): Promise<number> {
    const [row] = await this.rows('usage', [accountId, month]);
    return row ? codec.bigint(row.compute_units) : 0;
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
