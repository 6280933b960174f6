/** A dashboard login (its id is only ever stored hashed). */
export interface Session {
  idHash: string;
  accountId: string;
  /** The member logged in; null or absent: the account's own login. */
  memberId?: string | null;
  /** The token every change made with this session must carry (X-CSRF-Token). */
  csrf: string;
  createdAt: string;
  expiresAt: string;
}

/** Dashboard logins. */
export interface SessionStore {
  createSession(session: Session): Promise<void>;
  /** The session of this hash, if it has not expired. */
  getSession(idHash: string): Promise<Session | undefined>;
  deleteSession(idHash: string): Promise<void>;
  /**
   * Ends sessions of an account: every one (account suspended); with `memberId` null only those of the account's own
   * login, with a member's id only that member's (a password changed or reset, a member removed).
   */
  deleteSessionsOf(accountId: string, memberId?: string | null): Promise<void>;
  /** Keeps the account's `keep` newest live sessions and deletes the rest, expired ones included. */
  trimSessions(accountId: string, keep: number): Promise<void>;
  /** Deletes sessions that expired by `now` (retention); answers how many. */
  pruneSessions(now: string): Promise<number>;
}
