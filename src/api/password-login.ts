import { createHash, randomBytes } from 'node:crypto';
import type { Account } from '../accounts/model.ts';
import { hashPassword, verifyPassword } from '../accounts/password.ts';
import type { Store } from '../store/store.ts';

interface Verified { accountId: string; passwordHash: string; updatedAt: string; expires: number }

export interface PasswordLoginOptions {
  /** How long a successful check is remembered, ms. */
  ttlMs?: number;
  /** scrypt checks running at once (each takes ~128 MiB). */
  concurrency?: number;
  maxEntries?: number;
  /** Checks that may wait for a slot; past them a login is refused at once (PasswordCheckRefused). */
  maxWaiting?: number;
  /** Failed logins of one email in a row before it must wait: 1 s, then doubling up to `maxBackoffMs`. */
  freeFailures?: number;
  maxBackoffMs?: number;
  verify?: typeof verifyPassword;
  now?: () => number;
}

/** A login not checked at all: too many checks waiting, or its email failed too often just now. */
export class PasswordCheckRefused extends Error {
  constructor(readonly retryAfterSeconds: number, readonly reason: 'busy' | 'backoff') {
    super(reason === 'busy' ? 'too many password checks at once' : 'too many failed logins for this email just now');
  }
}

/**
 * Email and password logins (HTTP Basic) for the management API. scrypt costs ~0.1 s and 128 MiB per check, so:
 * a successful check is remembered for `ttlMs`, keyed by a SHA-256 of email and password (neither is kept); at most
 * `concurrency` checks run at once; and an unknown email costs the same as a wrong password (no enumeration).
 * The account is read from the store on every request, and a remembered check only counts while the account's
 * `updatedAt` and password hash are the ones it was made against: any change to the account, by this API, the
 * CLI or another instance, invalidates it at once.
 */
export class PasswordLogins {
  private readonly verified = new Map<string, Verified>();
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  private dummyHash: Promise<string> | undefined;

  private readonly ttlMs: number;
  private readonly concurrency: number;
  private readonly maxEntries: number;
  private readonly verify: typeof verifyPassword;
  private readonly maxWaiting: number;
  private readonly freeFailures: number;
  private readonly maxBackoffMs: number;
  private readonly now: () => number;
  /** Per email (lowercased, existing or not: no enumeration): failures in a row, and until when it must wait. */
  private readonly failures = new Map<string, { count: number; until: number }>();

  constructor(private readonly store: Pick<Store, 'getAccountByEmail'>, opts: PasswordLoginOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 60_000;
    this.concurrency = opts.concurrency ?? 2;
    this.maxEntries = opts.maxEntries ?? 1000;
    this.verify = opts.verify ?? verifyPassword;
    this.maxWaiting = opts.maxWaiting ?? 8;
    this.freeFailures = opts.freeFailures ?? 3;
    this.maxBackoffMs = opts.maxBackoffMs ?? 60_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * The account whose email and password these are, or undefined. Throws PasswordCheckRefused, checking nothing,
   * when `maxWaiting` checks already wait for a slot, or while the email is backing off after failures in a row.
   */
  async login(email: string, password: string): Promise<Account | undefined> {
    const who = email.toLowerCase();
    const backoff = this.failures.get(who);
    const now = this.now();
    if (backoff && backoff.until > now) throw new PasswordCheckRefused(Math.ceil((backoff.until - now) / 1000), 'backoff');
    const account = await this.checked(email, password);
    if (account) this.failures.delete(who);
    else this.failed(who);
    return account;
  }

  /** One more failure of `who`: past `freeFailures` in a row it waits 1 s, then twice as long each time. */
  private failed(who: string): void {
    const f = this.failures.get(who) ?? { count: 0, until: 0 };
    f.count++;
    if (f.count >= this.freeFailures) f.until = this.now() + Math.min(this.maxBackoffMs, 1000 * 2 ** (f.count - this.freeFailures));
    if (this.failures.size >= this.maxEntries * 10) this.failures.clear();
    this.failures.set(who, f);
  }

  private async checked(email: string, password: string): Promise<Account | undefined> {
    const id = createHash('sha256').update(email).update('\0').update(password).digest('hex');
    const account = await this.store.getAccountByEmail(email);
    const now = Date.now();
    const hit = this.verified.get(id);
    if (hit && hit.expires > now && account && hit.accountId === account.id && hit.updatedAt === account.updatedAt && hit.passwordHash === account.passwordHash) {
      return account;
    }
    if (hit) this.verified.delete(id);
    // A missing account or one without a password is checked against a throwaway hash, to take the same time.
    const stored = account?.passwordHash ?? (await (this.dummyHash ??= hashPassword(randomBytes(16).toString('hex'))));
    const ok = await this.limited(() => this.verify(password, stored));
    if (!ok || !account?.passwordHash) return undefined;
    if (this.verified.size >= this.maxEntries) this.verified.clear();
    this.verified.set(id, { accountId: account.id, passwordHash: account.passwordHash, updatedAt: account.updatedAt, expires: now + this.ttlMs });
    return account;
  }

  /** Runs `fn` when one of the `concurrency` slots is free; a finishing check hands its slot to the next in line. */
  private async limited<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running < this.concurrency) this.running++;
    else if (this.waiting.length >= this.maxWaiting) throw new PasswordCheckRefused(1, 'busy');
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
