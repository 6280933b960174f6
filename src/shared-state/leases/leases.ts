/**
 * Leases: work that one process does for every process sharing the state, one holder at a time, until its lease
 * lapses (each network's node checks: three instances tripled a node's check load; the others read the holder's
 * report). A holder that dies holds nothing once its lease runs out. Kept in memory (memory-leases.ts: one process,
 * and the workers' primary), in Redis (redis-leases.ts) or by the primary (remote-leases.ts); leases.contract.ts
 * runs against each. While the shared store does not answer, every process holds its own leases (the shared
 * state's fallback answers from a memory table of its own): each does the work itself, as one process alone would.
 */
export interface Leases {
  /**
   * Takes lease `name` for `ttlMs`, or keeps it when this process holds it (its time starts again); false while
   * another process holds it.
   */
  take(name: string, ttlMs: number): boolean | Promise<boolean>;
  close(): Promise<void>;
}
