import { createHash, randomBytes } from 'node:crypto';
import type { Account } from '../store/accounts/account.ts';
import { hashPassword, verifyPassword } from '../accounts/password.ts';
import type { AccountStore } from '../store/accounts/account-store.ts';
import type { MemberStore } from '../store/team/member-store.ts';
import type { Login } from '../accounts/team.ts';
import { AddressBounds } from './address-bounds.ts';
import type { BackoffOptions, LoginBackoffStore } from '../shared-state/login-backoff/login-backoff.ts';
import { MemoryLoginBackoff } from '../shared-state/login-backoff/memory-login-backoff.ts';
import { addressAndSubnet } from '../limits/subnet.ts';
import type { EventBudgets } from '../shared-state/event-budget/event-budget.ts';

interface Verified { loginId: string; passwordHash: string; updatedAt: string; expires: number }

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
  /** An address with no failed login for this long is clean: the email's backoff does not hold it back, ms. */
  cleanAfterMs?: number;
  /** Checks at once from one /24 or /64 (one per address). */
  checksPerSubnet?: number;
  /** Failed checks per address: a rate per minute and a burst (a /24 or /64: three times both). */
  failuresPerMinute?: number;
  failureBurst?: number;
  verify?: typeof verifyPassword;
  now?: () => number;
  /** The shared state's budgets, where the address budgets are kept (across processes when it is shared). */
  sharedBudgets?: EventBudgets;
  /** The shared state's login back-off (shared-login-backoff.ts when shared); default this process's memory. */
  backoff?: LoginBackoffStore & Pick<MemoryLoginBackoff, 'trusted'>;
}

/** The backoff's options from the logins' (defaults: 3 free failures, then 1 s doubling up to 60 s; clean after 15 min). */
export function loginBackoffOptions(opts: PasswordLoginOptions = {}): BackoffOptions {
  return {
    freeFailures: opts.freeFailures ?? 3, maxBackoffMs: opts.maxBackoffMs ?? 60_000,
    cleanAfterMs: opts.cleanAfterMs ?? 15 * 60_000, maxEntries: (opts.maxEntries ?? 1000) * 100,
  };
}

/** A login not checked at all: too many checks waiting, or its email failed too often just now. */
export class PasswordCheckRefused extends Error {
  constructor(readonly retryAfterSeconds: number, readonly reason: 'busy' | 'backoff' | 'address', message?: string) {
    super(message ?? (reason === 'busy' ? 'too many password checks at once' : reason === 'backoff' ? 'too many failed logins for this email just now' : 'too many failed logins from this address'));
  }
}

/**
 * Email and password logins (HTTP Basic) for the management API. scrypt costs ~0.1 s and 128 MiB per check, so:
 * a successful check is remembered for `ttlMs`, keyed by a SHA-256 of email and password (neither is kept); at most
 * `concurrency` checks run at once; and an unknown email costs the same as a wrong password (no enumeration).
 * The account is read from the store on every request, and a remembered check only counts while the account's
 * `updatedAt` and password hash are the ones it was made against: any change to the account, by this API, the
 * CLI or another instance, invalidates it at once.
 *
 * Before a check takes one of the global slots, the client's address must have none running and failures
 * left (src/api/address-bounds.ts), so a few addresses cannot fill the slots; and the backoff after failures is
 * kept per email and per email and address (src/shared-state/login-backoff/), so an address that has not failed is never
 * refused the right password. The current password of a password change goes through the same bound and counts.
 */
/** Where logins are found: accounts by email; members too when `members` is given. */
export interface LoginStores {
  accounts: Pick<AccountStore, 'getAccountByEmail'> & Partial<Pick<AccountStore, 'getAccount'>>;
  members?: Pick<MemberStore, 'getMemberByEmail'>;
}

export class PasswordLogins {
  private readonly verified = new Map<string, Verified>();
  /** Checks waiting for a slot: those of clean addresses first (see `bounded`), each queue up to `maxWaiting`. */
  private readonly waiting: { clean: (() => void)[]; failed: (() => void)[] } = { clean: [], failed: [] };
  /** Checks under way by email, password and stored hash: at most one per running or waiting check. */
  private readonly inflight = new Map<string, Promise<boolean>>();
  private running = 0;
  /** Running checks of addresses that failed lately: they may hold all slots but one (`bounded`). */
  private runningUntrusted = 0;
  private dummyHash: Promise<string> | undefined;

  private readonly ttlMs: number;
  private readonly concurrency: number;
  private readonly maxEntries: number;
  private readonly verify: typeof verifyPassword;
  private readonly maxWaiting: number;
  private readonly now: () => number;
  /** Per email (lowercased, existing or not: no enumeration) and per email and address: failures in a row. */
  private readonly backoff: LoginBackoffStore & Pick<MemoryLoginBackoff, 'trusted'>;
  private readonly addresses: AddressBounds;

  /** Members log in too when the store can find them (`getMemberByEmail` and `getAccount`). */
  constructor(private readonly store: LoginStores, opts: PasswordLoginOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 60_000;
    this.concurrency = opts.concurrency ?? 2;
    this.maxEntries = opts.maxEntries ?? 1000;
    this.verify = opts.verify ?? verifyPassword;
    this.maxWaiting = opts.maxWaiting ?? 8;
    this.now = opts.now ?? Date.now;
    this.backoff = opts.backoff ?? new MemoryLoginBackoff(loginBackoffOptions(opts));
    this.addresses = new AddressBounds({
      checksPerSubnet: opts.checksPerSubnet ?? 2, failuresPerMinute: opts.failuresPerMinute ?? 6, failureBurst: opts.failureBurst ?? 10, now: this.now,
      shared: opts.sharedBudgets,
    });
  }

  /**
   * The account whose email and password these are, or undefined. Throws PasswordCheckRefused, checking nothing,
   * while the address has a check running or no failures left, while this email backs off for this address, or
   * when `maxWaiting` checks already wait for a slot. `ip` is the client's (X-Forwarded-For only from trusted proxies).
   */
  async login(email: string, password: string, ip: string): Promise<Account | undefined> {
    return (await this.loginAs(email, password, ip))?.account;
  }

  /** As `login`, and which login it was: the account's own (no `member`) or one of its members. */
  async loginAs(email: string, password: string, ip: string): Promise<Login | undefined> {
    const who = email.toLowerCase();
    await this.refuseWhileBackingOff(who, ip);
    return this.checked(email, password, ip);
  }

  /**
   * Whether `password` is the logged-in account's (a password change asks for the current one): inside the same
   * bound as a login, and a wrong one counts as a failed login of this email from this address.
   */
  async verifyCurrent(account: Pick<Account, 'email' | 'passwordHash'>, password: string, ip: string): Promise<boolean> {
    const who = account.email.toLowerCase();
    await this.refuseWhileBackingOff(who, ip);
    if (account.passwordHash === null) {
      await this.count(who, ip, false);
      return false;
    }
    // Never waits for the address's slot: a logged-in session has no reason to check its password twice at once.
    return this.bounded(who, ip, () => this.verify(password, account.passwordHash!), false);
  }

  private async refuseWhileBackingOff(who: string, ip: string): Promise<void> {
    const wait = await this.backoff.waitSeconds(who, addressAndSubnet(ip).address, this.now());
    if (wait > 0) throw new PasswordCheckRefused(wait, 'backoff');
  }

  /** Awaited: in cluster mode the next try may reach another instance at once, and must find this one counted. */
  private async count(who: string, ip: string, ok: boolean): Promise<void> {
    const { address } = addressAndSubnet(ip);
    if (ok) return this.backoff.succeeded(who, address);
    await Promise.all([this.backoff.failed(who, address, this.now()), this.addresses.failed(ip)]);
  }

  /** The login of this email with what its password is checked against: the account's own, else a member's. */
  private async find(email: string): Promise<{ login: Login; id: string; passwordHash: string | null; updatedAt: string } | undefined> {
    const account = await this.store.accounts.getAccountByEmail(email);
    if (account) return { login: { account }, id: account.id, passwordHash: account.passwordHash, updatedAt: account.updatedAt };
    const member = await this.store.members?.getMemberByEmail(email);
    const of = member && (await this.store.accounts.getAccount?.(member.accountId));
    return of ? { login: { account: of, member }, id: member.id, passwordHash: member.passwordHash, updatedAt: member.updatedAt } : undefined;
  }

  private async checked(email: string, password: string, ip: string): Promise<Login | undefined> {
    const id = createHash('sha256').update(email).update('\0').update(password).digest('hex');
    const found = await this.find(email);
    const now = Date.now();
    const hit = this.verified.get(id);
    if (hit && hit.expires > now && found && hit.loginId === found.id && hit.updatedAt === found.updatedAt && hit.passwordHash === found.passwordHash) {
      await this.count(email.toLowerCase(), ip, true);
      return found.login;
    }
    if (hit) this.verified.delete(id);
    // A missing login or one without a password is checked against a throwaway hash, to take the same time.
    const stored = found?.passwordHash ?? (await (this.dummyHash ??= hashPassword(randomBytes(16).toString('hex'))));
    // The same email and password at once (a script's parallel calls on first use) share one check: they would
    // otherwise be refused by the address's one-check-at-a-time bound.
    const key = `${id}\0${stored}`;
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.bounded(email.toLowerCase(), ip, () => this.verify(password, stored)).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    const ok = await pending;
    if (!ok || !found?.passwordHash) return undefined;
    if (this.verified.size >= this.maxEntries) this.verified.clear();
    this.verified.set(id, { loginId: found.id, passwordHash: found.passwordHash, updatedAt: found.updatedAt, expires: now + this.ttlMs });
    return found.login;
  }

  /**
   * Runs the check `fn` in the address's slot (a trusted check waits for it; the others are refused at once when it
   * has none), then in one of the global slots, and counts its outcome (the backoff's and the address's failures). A check
   * from an address that has not failed lately, or that logged in to this email before, is trusted: it waits ahead
   * of the others, and one slot is kept for such checks. Addresses guessing hold at most one check each and never
   * all the slots, so an owner's login waits for no guess at all when that slot is free.
   */
  private async bounded(who: string, ip: string, fn: () => Promise<boolean>, mayQueue = true): Promise<boolean> {
    const address = addressAndSubnet(ip).address;
    const trusted = () => this.backoff.trusted(who, address, this.now());
    // Waiting for the address's slot is for trusted checks whose email has not started backing off from here
    // meanwhile (the checks ahead of them may have been this address's failures).
    const mayWait = async () => mayQueue && trusted() && (await this.backoff.waitSeconds(who, address, this.now())) === 0;
    const release = await this.addresses.enter(ip, mayWait);
    if (typeof release !== 'function') throw new PasswordCheckRefused(release.retryAfterSeconds, 'address', release.message);
    try {
      const ok = await this.limited(trusted(), fn);
      // Counted before the slot is given back: a check waiting for it then finds this one's failure.
      await this.count(who, ip, ok);
      return ok;
    } finally {
      release();
    }
  }

  /** Runs `fn` in a global slot, or waits for one (up to `maxWaiting` per queue); a finishing check starts the next. */
  private async limited<T>(trusted: boolean, fn: () => Promise<T>): Promise<T> {
    const queue = trusted ? this.waiting.clean : this.waiting.failed;
    if (queue.length === 0 && this.mayStart(trusted)) this.start(trusted);
    else if (queue.length >= this.maxWaiting) throw new PasswordCheckRefused(1, 'busy');
    else await new Promise<void>((resolve) => queue.push(resolve)); // started by `pump`
    try {
      return await fn();
    } finally {
      this.running--;
      if (!trusted) this.runningUntrusted--;
      this.pump();
    }
  }

  private mayStart(trusted: boolean): boolean {
    return this.running < this.concurrency && (trusted || this.runningUntrusted < Math.max(1, this.concurrency - 1));
  }

  private start(trusted: boolean): void {
    this.running++;
    if (!trusted) this.runningUntrusted++;
  }

  private pump(): void {
    for (;;) {
      const trusted = this.waiting.clean.length > 0 && this.mayStart(true);
      if (!trusted && !(this.waiting.failed.length > 0 && this.mayStart(false))) return;
      this.start(trusted);
      (trusted ? this.waiting.clean : this.waiting.failed).shift()!();
    }
  }
}
