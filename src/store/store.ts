import type { Account, ApiKey, KeyContext, Plan } from '../accounts/model.ts';

/** Fields a caller sets when creating; ids and timestamps are the store's unless given. */
export type NewPlan = Omit<Plan, 'createdAt' | 'updatedAt'>;
export type PlanPatch = Partial<Omit<Plan, 'id' | 'createdAt' | 'updatedAt'>>;
export type NewAccount = Omit<Account, 'createdAt' | 'updatedAt'>;
export type AccountPatch = Partial<Pick<Account, 'name' | 'email' | 'passwordHash' | 'status' | 'role' | 'planId'>>;
export type NewApiKey = Omit<ApiKey, 'createdAt' | 'lastUsedAt' | 'revokedAt'>;
export type ApiKeyPatch = Partial<Pick<ApiKey, 'name' | 'ipAllowlist' | 'originAllowlist' | 'networkAllowlist' | 'methodAllowlist' | 'expiresAt'>>;

/** A uniqueness or reference rule refused a write (duplicate email, plan in use, unknown plan...). */
export class StoreConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreConflictError';
  }
}

/**
 * The store: SQLite (embedded default, `store/sqlite.ts`) or PostgreSQL (`DATABASE_URL`, `store/postgres.ts`),
 * one interface, one contract test (`store/store.contract.ts`) run against both. All methods are async so both
 * variants fit; getters answer `undefined` for what does not exist; updates answer the new record or
 * `undefined` when there was none to update.
 */
/** A page of keys: at most `limit`, after the key with this creation time and id. */
export interface KeyPage {
  limit: number;
  after?: { createdAt: string; id: string };
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';

  listPlans(): Promise<Plan[]>;
  getPlan(id: string): Promise<Plan | undefined>;
  createPlan(plan: NewPlan): Promise<Plan>;
  updatePlan(id: string, patch: PlanPatch): Promise<Plan | undefined>;
  /** Refuses (StoreConflictError) while an account is on the plan. */
  deletePlan(id: string): Promise<boolean>;

  listAccounts(): Promise<Account[]>;
  getAccount(id: string): Promise<Account | undefined>;
  /** Emails are compared case-insensitively. */
  getAccountByEmail(email: string): Promise<Account | undefined>;
  createAccount(account: NewAccount): Promise<Account>;
  updateAccount(id: string, patch: AccountPatch): Promise<Account | undefined>;

  insertKey(key: NewApiKey): Promise<ApiKey>;
  getKey(id: string): Promise<ApiKey | undefined>;
  /**
   * The account's keys, oldest first; with `page`, at most `limit` of them after the key `after` (a keyset page:
   * stable while keys are added).
   */
  listKeys(accountId: string, page?: KeyPage): Promise<ApiKey[]>;
  /** How many of the account's keys are not revoked. */
  countActiveKeys(accountId: string): Promise<number>;
  /** The key with this SHA-256, with its account and plan, in one read (the hot path's only store access). */
  findKeyByHash(hash: string): Promise<KeyContext | undefined>;
  updateKey(id: string, patch: ApiKeyPatch): Promise<ApiKey | undefined>;
  /** Marks a key revoked (idempotent: a second revocation keeps the first time). */
  revokeKey(id: string): Promise<ApiKey | undefined>;
  /** Records last use of keys, in one batch (flushed periodically, never per request). */
  touchKeys(lastUsed: ReadonlyMap<string, string>): Promise<void>;

  /**
   * Adds compute units to accounts' usage of `month` (`YYYY-MM`, UTC), in one batch (DECISIONS 7: flushed
   * periodically, never per request). Concurrent adds from several instances all count.
   */
  addUsage(month: string, byAccount: ReadonlyMap<string, number>): Promise<void>;
  /** Compute units an account has used in `month` (0 when none). */
  getUsage(accountId: string, month: string): Promise<number>;

  getMeta(name: string): Promise<string | undefined>;
  setMeta(name: string, value: string): Promise<void>;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
