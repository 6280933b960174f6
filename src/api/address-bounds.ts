import { MemoryRateLimiter } from '../limits/memory-rate-limiter.ts';
import { addressAndSubnet } from '../limits/subnet.ts';

export interface AddressBoundsOptions {
  /** Password checks at once from one /24 (IPv4) or /64 (IPv6); one address has one at a time. */
  checksPerSubnet: number;
  /** Failed checks per address: a rate per minute and a burst; a /24 or /64 gets three times both. */
  failuresPerMinute: number;
  failureBurst: number;
  now?: () => number;
}

/** Why a check from an address was not even started. */
export type AddressRefusal = { reason: 'address'; retryAfterSeconds: number; message: string };

/**
 * The per-address part of the password-check bound (issue 17), asked before the few global scrypt slots: an address
 * has one check running at a time, a /24 or /64 `checksPerSubnet`, and each has a budget of failures. So six
 * addresses trying unknown emails hold at most six of the slots, then a trickle each, and the others' logins get
 * the rest. In memory per instance, as the unknown-key guard (no round trip; N instances give N trickles).
 */
export class AddressBounds {
  private readonly running = new Map<string, number>();
  private readonly failures: MemoryRateLimiter;

  constructor(private readonly o: AddressBoundsOptions) {
    this.failures = new MemoryRateLimiter(o.now);
  }

  /** Takes the address's check slot: a function that gives it back, or why not. */
  enter(ip: string): (() => void) | AddressRefusal {
    const { address, subnet } = addressAndSubnet(ip);
    const rate = this.o.failuresPerMinute / 60;
    for (const [key, k] of [[`a ${address}`, 1], [`s ${subnet}`, 3]] as const) {
      if (!this.failures.wouldAdmit(key, 1, rate * k, this.o.failureBurst * k)) {
        return { reason: 'address', retryAfterSeconds: Math.ceil(60 / (this.o.failuresPerMinute * k)), message: 'too many failed logins from this address' };
      }
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

  /** A failed check from `ip`: spends from the address's and its subnet's budgets. */
  failed(ip: string): void {
    const { address, subnet } = addressAndSubnet(ip);
    const rate = this.o.failuresPerMinute / 60;
    this.failures.consumeSync(`a ${address}`, 1, rate, this.o.failureBurst);
    this.failures.consumeSync(`s ${subnet}`, 1, rate * 3, this.o.failureBurst * 3);
  }

  private add(key: string, d: number): void {
    const n = (this.running.get(key) ?? 0) + d;
    if (n <= 0) this.running.delete(key);
    else this.running.set(key, n);
  }
}
