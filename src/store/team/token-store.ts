import type { MemberRole } from '../model.ts';

/**
 * A single-use token: an invitation to join an account, or a password reset. Only its SHA-256 is kept;
 * `id` is a separate public handle (to list and withdraw invitations) that opens nothing.
 */
export interface AccountToken {
  idHash: string;
  id: string;
  kind: 'invite' | 'reset';
  accountId: string;
  /** A reset of a member's password; null: of the account's own login (or an invitation). */
  memberId: string | null;
  email: string;
  /** The role an invitation gives. */
  role: MemberRole | null;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
}

/** Invitations and password resets. */
export interface TokenStore {
  createAccountToken(token: AccountToken): Promise<void>;
  /**
   * Marks the token of this hash and kind used, if it is unused and unexpired at `now`, and answers it; otherwise
   * undefined. One statement: of two concurrent uses exactly one gets the token.
   */
  consumeAccountToken(idHash: string, kind: AccountToken['kind'], now: string): Promise<AccountToken | undefined>;
  /** The account's invitations not used and not expired at `now`, oldest first. */
  listInvitations(accountId: string, now: string): Promise<AccountToken[]>;
  /** Withdraws an unused invitation of the account by its public id. */
  deleteInvitation(accountId: string, id: string): Promise<boolean>;
  /** Drops tokens expired or used before `before` (retention); answers how many. */
  pruneAccountTokens(before: string): Promise<number>;
}
