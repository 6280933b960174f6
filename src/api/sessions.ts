import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Account } from '../store/accounts/account.ts';
import type { Session, SessionStore } from '../store/sessions/session-store.ts';

/** The session cookie: HttpOnly (scripts never see it), SameSite=Strict, Secure when served over TLS. */
export const SESSION_COOKIE = 'nodegate_session';

const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');

/**
 * Creation times strictly increase within a process: the cap ends sessions by `created_at`, and two logins in the same
 * millisecond would otherwise tie, so a newer session could end before an older one (seen in CI).
 */
let lastCreatedMs = 0;
function creationMs(): number {
  lastCreatedMs = Math.max(Date.now(), lastCreatedMs + 1);
  return lastCreatedMs;
}

/**
 * Dashboard logins (docs/decisions.md §6): a random 256-bit value in an HttpOnly cookie, stored only as its SHA-256 (a copy
 * of the store opens no session), with a CSRF token that every change made with it must carry in `X-CSRF-Token`.
 * Kept in the store, so that every instance knows every session and a logout or a password change ends them all.
 */
export class Sessions {
  /** `maxPerAccount`: live sessions an account keeps; a login past it ends the oldest (rows bounded). */
  constructor(private readonly store: { sessions: SessionStore }, private readonly ttlMs: number, private readonly maxPerAccount = 20) {}

  /** A new session: the cookie's value (shown to the browser only) and the session; the oldest past the cap end. */
  async create(account: Account, memberId: string | null = null): Promise<{ value: string; session: Session }> {
    const value = randomBytes(32).toString('base64url');
    const now = creationMs();
    const session: Session = {
      idHash: sha256(value), accountId: account.id, memberId, csrf: randomBytes(24).toString('base64url'),
      createdAt: new Date(now).toISOString(), expiresAt: new Date(now + this.ttlMs).toISOString(),
    };
    await this.store.sessions.createSession(session);
    // Also deletes the account's expired sessions: logins in a loop leave at most `maxPerAccount` rows behind.
    await this.store.sessions.trimSessions(account.id, this.maxPerAccount);
    return { value, session };
  }

  /** The live session of a cookie value, or undefined. */
  async find(value: string | undefined): Promise<Session | undefined> {
    if (!value || value.length > 100) return undefined;
    return this.store.sessions.getSession(sha256(value));
  }

  async end(value: string): Promise<void> {
    await this.store.sessions.deleteSession(sha256(value));
  }

  /**
   * Ends every session of the account (suspended); with `memberId` (null: the account's own login) only that
   * login's (its password changed or reset).
   */
  async endAll(accountId: string, memberId?: string | null): Promise<void> {
    await this.store.sessions.deleteSessionsOf(accountId, memberId);
  }

  get maxAgeSeconds(): number {
    return Math.floor(this.ttlMs / 1000);
  }
}

/** Constant-time comparison of a CSRF token sent with a change and the session's. */
export function csrfMatches(sent: unknown, expected: string): boolean {
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
