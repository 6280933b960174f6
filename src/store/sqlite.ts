import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Account, ApiKey, KeyContext, Plan } from '../accounts/model.ts';
import { accountConflict, keyConflict, planConflict, rethrowConflict, type Violation } from './conflict.ts';
import {
  ACCOUNT_COLUMNS, ACCOUNT_FIELDS, KEY_COLUMNS, KEY_FIELDS, PLAN_COLUMNS, PLAN_FIELDS, accountFromRow, given, isoTime, keyFromRow, normalizeEmail, planFromRow,
  selectList, usageBatch, type Codec, type Row,
} from './rows.ts';
import { migrateSqlite } from './sqlite-migrations.ts';
import type { AccountPatch, ApiKeyPatch, KeyPage, NewAccount, NewApiKey, NewPlan, PlanPatch, Store } from './store.ts';

const codec: Codec = {
  bool: (v) => v === 1,
  list: (v) => JSON.parse(v as string) as string[],
  time: (v) => v as string,
  bigint: (v) => Number(v),
};

const planParams = (p: Plan) => ({
  id: p.id, name: p.name, cu_per_second: p.cuPerSecond, cu_per_month: p.cuPerMonth, max_batch_size: p.maxBatchSize,
  debug_methods: p.debugMethods ? 1 : 0, max_filters: p.maxFilters, created_at: p.createdAt, updated_at: p.updatedAt,
});
const accountParams = (a: Account) => ({
  id: a.id, name: a.name, email: a.email, email_normalized: normalizeEmail(a.email), password_hash: a.passwordHash,
  status: a.status, role: a.role, plan_id: a.planId, created_at: a.createdAt, updated_at: a.updatedAt,
});
const keyParams = (k: ApiKey) => ({
  id: k.id, account_id: k.accountId, name: k.name, type: k.type, permissions: JSON.stringify(k.permissions),
  prefix: k.prefix, hash: k.hash, ip_allowlist: JSON.stringify(k.ipAllowlist),
  origin_allowlist: JSON.stringify(k.originAllowlist), network_allowlist: JSON.stringify(k.networkAllowlist),
  method_allowlist: JSON.stringify(k.methodAllowlist), expires_at: k.expiresAt && isoTime(k.expiresAt),
  created_at: k.createdAt, last_used_at: k.lastUsedAt, revoked_at: k.revokedAt,
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
  private readonly updates;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('foreign_keys = ON');
    migrateSqlite(this.db);
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
      usage: db.prepare<[string, string], { compute_units: number }>('SELECT compute_units FROM usage WHERE account_id = ? AND month = ?'),
      getMeta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE name = ?'),
      setMeta: db.prepare('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
      ping: db.prepare('SELECT 1'),
    };
    const { stmts } = this;
    this.touchAll = db.transaction((lastUsed: ReadonlyMap<string, string>) => {
      for (const [id, t] of lastUsed) stmts.touchKey.run({ id, t: isoTime(t) });
    });
    this.addUsageAll = db.transaction((month: string, ids: string[], units: number[]) => {
      ids.forEach((id, i) => stmts.addUsage.run({ id, month, units: units[i] }));
    });
    // Read, merge, write in one IMMEDIATE transaction: no lost update against another writer of the file
    // (the CLI while the server runs), and one prepared statement per table whatever the patch.
    const now = () => new Date().toISOString();
    this.updates = {
      plan: db.transaction((id: string, patch: PlanPatch): Plan | undefined => {
        const row = stmts.plan.get(id);
        if (!row) return undefined;
        stmts.updatePlan.run(planParams({ ...planFromRow(row, codec), ...given(patch, PLAN_FIELDS), updatedAt: now() }));
        return planFromRow(stmts.plan.get(id)!, codec);
      }),
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

  async listPlans(): Promise<Plan[]> {
    return this.stmts.listPlans.all().map((r) => planFromRow(r, codec));
  }

  async getPlan(id: string): Promise<Plan | undefined> {
    const row = this.stmts.plan.get(id);
    return row && planFromRow(row, codec);
  }

  async createPlan(plan: NewPlan): Promise<Plan> {
    const now = new Date().toISOString();
    this.write(() => this.stmts.insertPlan.run(planParams({ ...plan, createdAt: now, updatedAt: now })), planConflict(plan.id));
    return (await this.getPlan(plan.id))!;
  }

  async updatePlan(id: string, patch: PlanPatch): Promise<Plan | undefined> {
    return this.updates.plan.immediate(id, patch);
  }

  async deletePlan(id: string): Promise<boolean> {
    return this.write(() => this.stmts.deletePlan.run(id).changes > 0, planConflict(id));
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

  async addUsage(month: string, byAccount: ReadonlyMap<string, number>): Promise<void> {
    const { ids, units } = usageBatch(month, byAccount);
    // IMMEDIATE: takes the write lock first, so another instance on the file waits (busy_timeout) rather than failing.
    if (ids.length > 0) this.addUsageAll.immediate(month, ids, units);
  }

  async getUsage(accountId: string, month: string): Promise<number> {
    return this.stmts.usage.get(accountId, month)?.compute_units ?? 0;
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

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
