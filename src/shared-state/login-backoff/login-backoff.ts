/** A run of failures: how many in a row, and when the last was (ms). */
export interface Streak { count: number; last: number }

export interface BackoffOptions {
  /** Failures in a row before a wait: 1 s, then doubling up to `maxBackoffMs`. */
  freeFailures: number;
  maxBackoffMs: number;
  /** An address with no failure for this long is clean again, ms; a streak this old starts again. */
  cleanAfterMs: number;
  maxEntries: number;
}

/** What the backoff of one login (email, address) depends on, wherever it is kept. */
export interface BackoffState {
  /** The email's streak from this address, and the email's own. */
  pair?: Streak;
  email?: Streak;
  /** When the address last failed (any email). */
  dirtyAt?: number;
  /** Whether the address logged in to this email before. */
  knownGood: boolean;
}

/**
 * Where the backoff after failed logins is kept: this process's memory (memory-login-backoff.ts), Redis
 * (redis-login-backoff.ts) or the workers' primary (remote-login-backoff.ts); login-backoff.contract.ts runs against
 * each. Shared, it is kept in both this process's memory and the shared store (shared-login-backoff.ts).
 */
export interface LoginBackoffStore {
  /** Seconds `address` must wait before a login to `email` is checked, or 0. */
  waitSeconds(email: string, address: string, now: number): number | Promise<number>;
  failed(email: string, address: string, now: number): void | Promise<void>;
  /** The right password from `address`: its own streak ends, and it is known for this email from now on. */
  succeeded(email: string, address: string): void | Promise<void>;
}

/** When a streak's wait ends (0: no wait): 1 s at `freeFailures` in a row, doubling up to `maxBackoffMs`. */
export function streakUntil(s: Streak | undefined, o: BackoffOptions): number {
  if (!s || s.count < o.freeFailures) return 0;
  return s.last + Math.min(o.maxBackoffMs, 1000 * 2 ** Math.min(30, s.count - o.freeFailures));
}

/**
 * The seconds to wait, from the state (one rule for every store). The email's streak holds back only an address
 * that has failed lately and has not logged in to this email before; the pair's holds back the address that failed.
 */
export function backoffWait(st: BackoffState, now: number, o: BackoffOptions): number {
  const fresh = (s: Streak | undefined) => (s && now - s.last < o.cleanAfterMs ? s : undefined);
  const pair = streakUntil(fresh(st.pair), o);
  let until = pair > now ? pair : 0;
  const e = streakUntil(fresh(st.email), o);
  const dirty = st.dirtyAt !== undefined && now - st.dirtyAt < o.cleanAfterMs;
  if (e > now && until < e && dirty && !st.knownGood) until = e;
  return until > now ? Math.ceil((until - now) / 1000) : 0;
}
