import type { BudgetLimiter, EventBudget } from '../limits/event-budget.ts';
import { eventBudget } from '../limits/shared-event-budget.ts';
import { addressAndSubnet } from '../limits/subnet.ts';

export interface AddressBoundsOptions {
  /** Password checks at once from one /24 (IPv4) or /64 (IPv6); one address has one at a time. */
  checksPerSubnet: number;
  /** Failed checks per address: a rate per minute and a burst; a /24 or /64 gets three times both. */
  failuresPerMinute: number;
  failureBurst: number;
  now?: () => number;
  /** Cluster mode: the failure budgets are kept in the gateway's Redis limiter too (issue 21). */
  shared?: BudgetLimiter;
}

/** Why a check from an address was not even started. */
export type AddressRefusal = { reason: 'address'; retryAfterSeconds: number; message: string };

/**
 * The per-address part of the password-check bound (issue 17), asked before the few global scrypt slots: an address
 * has one check running at a time, a /24 or /64 `checksPerSubnet`, and each has a budget of failures. So six
 * addresses trying unknown emails hold at most six of the slots, then a trickle each, and the others' logins get
 * the rest. The failure budgets are shared by the instances in cluster mode (as the unknown-key guard: issue 21);
 * the checks running are this instance's (they hold its scrypt slots).
 */
export class AddressBounds {
  private readonly running = new Map<string, number>();
  private readonly perAddress: EventBudget;
  private readonly perSubnet: EventBudget;

  constructor(private readonly o: AddressBoundsOptions) {
    const rate = o.failuresPerMinute / 60;
    this.perAddress = eventBudget('login:a', { perSecond: rate, burst: o.failureBurst }, o.shared, o.now);
    this.perSubnet = eventBudget('login:s', { perSecond: rate * 3, burst: o.failureBurst * 3 }, o.shared, o.now);
  }

  /** Takes the address's check slot: a function that gives it back, or why not. */
  enter(ip: string): (() => void) | AddressRefusal | Promise<(() => void) | AddressRefusal> {
    const { address, subnet } = addressAndSubnet(ip);
    const a = this.perAddress.exhausted(address);
    const s = this.perSubnet.exhausted(subnet);
    if (a instanceof Promise || s instanceof Promise) return Promise.all([a, s]).then(([x, y]) => this.take(address, subnet, x, y));
    return this.take(address, subnet, a, s);
  }

  /** A failed check from `ip`: spends from the address's and its subnet's budgets. */
  failed(ip: string): void | Promise<unknown> {
    const { address, subnet } = addressAndSubnet(ip);
    const a = this.perAddress.spend(address);
    const s = this.perSubnet.spend(subnet);
    if (a instanceof Promise || s instanceof Promise) return Promise.all([a, s]);
  }

  private take(address: string, subnet: string, addressSpent: boolean, subnetSpent: boolean): (() => void) | AddressRefusal {
    if (addressSpent || subnetSpent) {
      const k = addressSpent ? 1 : 3;
      return { reason: 'address', retryAfterSeconds: Math.ceil(60 / (this.o.failuresPerMinute * k)), message: 'too many failed logins from this address' };
    }
    if ((this.running.get(address) ?? 0) >= 1 || (this.running.get(subnet) ?? 0) >= this.o.checksPerSubnet) {
      return { reason: 'address', retryAfterSeconds: 1, message: 'a password check from this address is already running' };
    }
    this.add(address, 1);
    this.add(subnet, 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.add(address, -1);
      this.add(subnet, -1);
    };
  }

  private add(key: string, d: number): void {
    const n = (this.running.get(key) ?? 0) + d;
    if (n <= 0) this.running.delete(key);
    else this.running.set(key, n);
  }
}
