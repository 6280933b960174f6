import type { Account } from '../model.ts';

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
