import { LRUCache } from 'lru-cache';
import { backoffWait, type BackoffOptions, type LoginBackoffStore, type Streak } from './login-backoff.ts';

/**
 * A map that forgets its oldest entries past `max`; writes move a key last, reads do not. lru-cache keeps the order
 * (an eviction is a constant cost, where a Map that drops its first entry by iterating from its start pays for every
 * entry deleted before it).
 */
export class BoundedMap<V extends NonNullable<unknown>> {
  private readonly m: LRUCache<string, V>;
  constructor(max: number) { this.m = new LRUCache<string, V>({ max: Math.max(1, max) }); }
  get(k: string): V | undefined { return this.m.peek(k); }
  delete(k: string): void { this.m.delete(k); }
  // The oldest entry goes, never all at once: a flood of new names cannot wipe everyone's backoff.
  set(k: string, v: V): void { this.m.set(k, v); }
  get size(): number { return this.m.size; }
}

/**
 * Backoff after failed logins. Two streaks per failure: the email's own (guessing one account slowly from
 * many addresses) and the email's from this address. The email's streak holds back only addresses that have failed
 * lately (any email) and have not logged in to this email before: a clean address, or one the owner logs in from,
 * is never refused the right password because someone elsewhere keeps the email "locked". The pair's streak holds
 * back the address that failed, whatever else. This is the memory store: one process's, the local part of the
 * shared one, and the workers' primary's.
 */
export class MemoryLoginBackoff implements LoginBackoffStore {
  private readonly byEmail: BoundedMap<Streak>;
  private readonly byPair: BoundedMap<Streak>;
  /** Addresses by their last failure. */
  private readonly dirty: BoundedMap<number>;
  /** email + address pairs that logged in. */
  private readonly knownGood: BoundedMap<true>;

  constructor(private readonly o: BackoffOptions) {
    this.byEmail = new BoundedMap(o.maxEntries);
    this.byPair = new BoundedMap(o.maxEntries);
    this.dirty = new BoundedMap(o.maxEntries);
    this.knownGood = new BoundedMap(o.maxEntries);
  }

  /** Seconds `address` must wait before a login to `email` is checked, or 0. */
  waitSeconds(email: string, address: string, now: number): number {
    return backoffWait({
      pair: this.byPair.get(`${email}\0${address}`), email: this.byEmail.get(email),
      dirtyAt: this.dirty.get(address), knownGood: this.knownGood.get(`${email}\0${address}`) === true,
    }, now, this.o);
  }

  failed(email: string, address: string, now: number): void {
    this.dirty.set(address, now);
    this.bump(this.byEmail, email, now);
    this.bump(this.byPair, `${email}\0${address}`, now);
  }

  /** The right password from `address`: its own streak ends, and it is known for this email from now on. */
  succeeded(email: string, address: string): void {
    this.byPair.delete(`${email}\0${address}`);
    this.knownGood.set(`${email}\0${address}`, true);
  }

  /** Whether `address` has not failed lately, or logged in to `email` before: its checks go first. */
  trusted(email: string, address: string, now: number): boolean {
    return !this.hasFailed(address, now) || this.knownGood.get(`${email}\0${address}`) === true;
  }

  private hasFailed(address: string, now: number): boolean {
    const at = this.dirty.get(address);
    return at !== undefined && now - at < this.o.cleanAfterMs;
  }

  private bump(map: BoundedMap<Streak>, key: string, now: number): void {
    const old = map.get(key);
    const s = old && now - old.last < this.o.cleanAfterMs ? old : { count: 0, last: now };
    s.count++;
    s.last = now;
    map.set(key, s);
  }
}
