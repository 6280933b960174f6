import type { EventBudget, EventBudgets } from '../shared-state/event-budget/event-budget.ts';
import { eventBudget } from '../shared-state/event-budget/event-budgets.ts';
import { addressAndSubnet } from '../limits/subnet.ts';

export interface AddressBoundsOptions {
  /** Password checks at once from one /24 (IPv4) or /64 (IPv6); one address has one at a time. */
  checksPerSubnet: number;
  /** Failed checks per address: a rate per minute and a burst; a /24 or /64 gets three times both. */
  failuresPerMinute: number;
  failureBurst: number;
  now?: () => number;
  /** The shared state's budgets (Redis, the workers' primary): the failure budgets hold across processes. */
  shared?: EventBudgets;
}

/** Why a check from an address was not even started. */
export type AddressRefusal = { reason: 'address'; retryAfterSeconds: number; message: string };

/** Trusted checks that may wait at once for a slot of one /24 or /64; past them one is refused as before. */
const WAITING_PER_SUBNET = 16;

/**
 * The per-address part of the password-check bound, asked before the few global scrypt slots: an address
 * has one check running at a time, a /24 or /64 `checksPerSubnet`, and each has a budget of failures. So six
 * addresses trying unknown emails hold at most six of the slots, then a trickle each, and the others' logins get
 * the rest. The failure budgets are shared by the instances in cluster mode (as the unknown-key guard);
 * the checks running are this instance's (they hold its scrypt slots).
 *
 * A trusted check (an address that has not failed lately, or that logged in to this email before) that finds its
 * address's or subnet's slots taken waits for one instead of being refused: people of one office log in at the same
 * moment, and while others' guessing makes every check slow, slots stay taken long enough that an immediate refusal
 * turned most of a team's first logins away. Addresses that failed are still refused at once.
 */
export class AddressBounds {
  private readonly running = new Map<string, number>();
  /** Trusted checks waiting for a slot of their subnet, in arrival order. */
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly perAddress: EventBudget;
  private readonly perSubnet: EventBudget;

  constructor(private readonly o: AddressBoundsOptions) {
    const rate = o.failuresPerMinute / 60;
    this.perAddress = eventBudget('login:a', { perSecond: rate, burst: o.failureBurst }, o.shared, o.now);
    this.perSubnet = eventBudget('login:s', { perSecond: rate * 3, burst: o.failureBurst * 3 }, o.shared, o.now);
  }

  /**
   * Takes the address's check slot, or why not. A check that finds the slots taken waits for one while `trusted()`
   * says so, asked again at each wake-up (an address that fails meanwhile, or whose email backs off, stops waiting).
   */
  async enter(ip: string, trusted: () => boolean | Promise<boolean> = () => false): Promise<(() => void) | AddressRefusal> {
    const { address, subnet } = addressAndSubnet(ip);
    const [a, s, t] = await Promise.all([this.perAddress.exhausted(address), this.perSubnet.exhausted(subnet), trusted()]);
    // From here to queueing nothing awaits, so no slot can be given back unseen in between.
    const got = this.take(address, subnet, a, s, t);
    return got instanceof Promise ? got.then(() => this.enter(ip, trusted)) : got;
  }

  /** A failed check from `ip`: spends from the address's and its subnet's budgets. */
  failed(ip: string): void | Promise<unknown> {
    const { address, subnet } = addressAndSubnet(ip);
    const a = this.perAddress.spend(address);
    const s = this.perSubnet.spend(subnet);
    if (a instanceof Promise || s instanceof Promise) return Promise.all([a, s]);
  }

  /** The slot, a refusal, or (trusted, slots taken) a promise that settles when a check of the subnet ends. */
  private take(address: string, subnet: string, addressSpent: boolean, subnetSpent: boolean, trusted: boolean): (() => void) | AddressRefusal | Promise<void> {
    if (addressSpent || subnetSpent) {
      const k = addressSpent ? 1 : 3;
      return { reason: 'address', retryAfterSeconds: Math.ceil(60 / (this.o.failuresPerMinute * k)), message: 'too many failed logins from this address' };
    }
    if ((this.running.get(address) ?? 0) >= 1 || (this.running.get(subnet) ?? 0) >= this.o.checksPerSubnet) {
      const queue = this.waiting.get(subnet) ?? [];
      if (!trusted || queue.length >= WAITING_PER_SUBNET) {
        return { reason: 'address', retryAfterSeconds: 1, message: 'a password check from this address is already running' };
      }
      this.waiting.set(subnet, queue);
      return new Promise<void>((resolve) => queue.push(resolve));
    }
    this.add(address, 1);
    this.add(subnet, 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.add(address, -1);
      this.add(subnet, -1);
      this.wake(subnet);
    };
  }

  /** Every waiter of the subnet tries again, in order; those still without a slot queue again in the same order. */
  private wake(subnet: string): void {
    const queue = this.waiting.get(subnet);
    if (!queue) return;
    this.waiting.delete(subnet);
    for (const resume of queue) resume();
  }

  private add(key: string, d: number): void {
    const n = (this.running.get(key) ?? 0) + d;
    if (n <= 0) this.running.delete(key);
    else this.running.set(key, n);
  }
}
