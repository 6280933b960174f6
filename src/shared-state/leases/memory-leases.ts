import type { Leases } from './leases.ts';

/** The holder a process alone is: every lease it asks for is its own. */
const THIS_PROCESS = 'this process';

/**
 * Leases in this process's memory: one process's (every lease is its own), and the table the workers' primary keeps
 * for them (each worker a holder, named by the primary).
 */
export class MemoryLeases implements Leases {
  private readonly held = new Map<string, { holder: string; until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Decided at once (no promise); `holder` is who asks (the primary names its workers). */
  take(name: string, ttlMs: number, holder = THIS_PROCESS): boolean {
    const now = this.now();
    const lease = this.held.get(name);
    if (lease && lease.holder !== holder && lease.until > now) return false;
    this.held.set(name, { holder, until: now + ttlMs });
    return true;
  }

  async close(): Promise<void> {}
}
