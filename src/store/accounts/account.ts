/** An account (docs/decisions.md §6): it has a plan and keys. Management is in accounts/service.ts. */
export type AccountStatus = 'active' | 'suspended';
export type Role = 'operator' | 'member';

export interface Account {
  id: string;
  name: string;
  email: string;
  /** scrypt hash (`scrypt$N$r$p$salt$hash`), or null for an account that cannot log in. */
  passwordHash: string | null;
  status: AccountStatus;
  role: Role;
  planId: string;
  createdAt: string;
  updatedAt: string;
}
