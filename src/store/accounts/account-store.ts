import type { Account } from './account.ts';
import type { Codec } from '../sql/codec.ts';
import { given } from '../sql/patch.ts';
import type { Violation, SqlDb } from '../sql/sql-db.ts';
import type { AccountsTable } from '../sql/tables.ts';

export type NewAccount = Omit<Account, 'createdAt' | 'updatedAt'>;
export type AccountPatch = Partial<Pick<Account, 'name' | 'email' | 'passwordHash' | 'status' | 'role' | 'planId'>>;

/** Accounts: who holds keys, on which plan. */
export interface AccountStore {
  /** Oldest first. */
  listAccounts(): Promise<Account[]>;
  getAccount(id: string): Promise<Account | undefined>;
  /** Emails are compared case-insensitively. */
  getAccountByEmail(email: string): Promise<Account | undefined>;
  /** Refuses (StoreConflictError) an id or email that exists, or an unknown plan. */
  createAccount(account: NewAccount): Promise<Account>;
  updateAccount(id: string, patch: AccountPatch): Promise<Account | undefined>;
}

/** Every column of an account as the model reads it (the lower-cased email is the store's own). */
export const ACCOUNT_COLUMNS = [
  'id', 'name', 'email', 'password_hash', 'status', 'role', 'plan_id', 'created_at', 'updated_at',
] as const satisfies readonly (keyof AccountsTable)[];

/**
 * Emails are unique whatever their case: the store keeps a lower-cased copy (`email_normalized`, unique), folded here
 * and nowhere else, so SQLite and PostgreSQL compare alike. Members' emails share it.
 */
export const normalizeEmail = (email: string): string => email.toLowerCase();

/** An account from its row; `p`: the prefix of its columns in a joined row (the key lookup). */
export function accountFromRow(r: Record<string, unknown>, c: Codec, p = ''): Account {
  return {
    id: r[p + 'id'] as string,
    name: r[p + 'name'] as string,
    email: r[p + 'email'] as string,
    passwordHash: (r[p + 'password_hash'] as string | null) ?? null,
    status: r[p + 'status'] as Account['status'],
    role: r[p + 'role'] as Account['role'],
    planId: r[p + 'plan_id'] as string,
    createdAt: c.time(r[p + 'created_at'] as string),
    updatedAt: c.time(r[p + 'updated_at'] as string),
  };
}

/** What an update may set, by field, with its column. */
const ACCOUNT_FIELDS = {
  name: 'name', email: 'email', passwordHash: 'password_hash', status: 'status', role: 'role', planId: 'plan_id',
} as const satisfies Record<keyof AccountPatch, keyof AccountsTable>;

const conflict = (a: { id?: string; email?: string; planId?: string }) => (v: Violation) => {
  if (v.kind === 'reference') return `unknown plan "${a.planId}"`;
  return v.column === 'id' ? `account "${a.id}" already exists` : `an account with email ${a.email} already exists`;
};

/** The account store on a database. */
export function accountStore(db: SqlDb): AccountStore {
  const { k, codec } = db;
  const one = (row: object | undefined) => row && accountFromRow(row as Record<string, unknown>, codec);
  return {
    async listAccounts() {
      const rows = await k.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
      return rows.map((r) => accountFromRow(r as Record<string, unknown>, codec));
    },
    getAccount: async (id) => one(await k.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst()),
    getAccountByEmail: async (email) =>
      one(await k.selectFrom('accounts').selectAll().where('email_normalized', '=', normalizeEmail(email)).executeTakeFirst()),
    async createAccount(a) {
      const now = new Date().toISOString();
      const row: AccountsTable = {
        id: a.id, name: a.name, email: a.email, email_normalized: normalizeEmail(a.email), password_hash: a.passwordHash,
        status: a.status, role: a.role, plan_id: a.planId, created_at: now, updated_at: now,
      };
      return one(await db.guard(() => k.insertInto('accounts').values(row).returningAll().executeTakeFirstOrThrow(), conflict(a)))!;
    },
    // One statement: the constraints guard the new email and plan, so no read-merge-write (nor its lock) is needed.
    async updateAccount(id, patch) {
      const fields = given(patch, Object.keys(ACCOUNT_FIELDS));
      const set: Partial<AccountsTable> = Object.fromEntries(Object.entries(fields).map(([f, v]) => [ACCOUNT_FIELDS[f as keyof AccountPatch], v]));
      if (fields.email !== undefined) set.email_normalized = normalizeEmail(fields.email);
      set.updated_at = new Date().toISOString();
      const run = () => k.updateTable('accounts').set(set).where('id', '=', id).returningAll().executeTakeFirst();
      return one(await db.guard(run, conflict({ ...patch, id })));
    },
  };
}
