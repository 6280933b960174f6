import type { LoginBackoffStore } from './login-backoff.ts';
import type { MemoryLoginBackoff } from './memory-login-backoff.ts';

/**
 * What the shared part of the login back-off answers while its store (Redis, the workers' primary) does not: no wait,
 * nothing kept. The process's own memory, which SharedLoginBackoff always keeps, then decides alone.
 */
export const NOTHING_SHARED: LoginBackoffStore = {
  waitSeconds: () => 0,
  failed: () => {},
  succeeded: () => {},
};

/**
 * The login backoff shared by processes: the shared store (Redis for instances, the primary for workers) is the
 * shared truth (an email guessed through three instances backs off as through one), this process's memory the
 * fallback, and the longer of the two waits holds. Failures and successes are written to both, and awaited: the next
 * try may reach another process at once. `shared` comes through the shared state's fallback: while its store fails
 * or times out it answers NOTHING_SHARED at once, and memory alone decides, as on one process.
 */
export class SharedLoginBackoff implements LoginBackoffStore {
  constructor(private readonly local: MemoryLoginBackoff, private readonly shared: LoginBackoffStore) {}

  waitSeconds(email: string, address: string, now: number): number | Promise<number> {
    const local = this.local.waitSeconds(email, address, now);
    // Asked even when memory already says wait: the shared store may know a longer one (failures made elsewhere),
    // and a login is dear enough that a round trip before it costs nothing to speak of.
    const shared = this.shared.waitSeconds(email, address, now);
    return typeof shared === 'number' ? Math.max(local, shared) : shared.then((s) => Math.max(local, s));
  }

  failed(email: string, address: string, now: number): void | Promise<void> {
    this.local.failed(email, address, now);
    return this.shared.failed(email, address, now);
  }

  succeeded(email: string, address: string): void | Promise<void> {
    this.local.succeeded(email, address);
    return this.shared.succeeded(email, address);
  }

  /** Whether `address` has not failed lately here, or logged in to `email` before: its checks go first (local slots). */
  trusted(email: string, address: string, now: number): boolean {
    return this.local.trusted(email, address, now);
  }
}
