/**
 * Answers that several instances keep once for all of them (the shared cache tier behind each instance's memory
 * cache, cache/shared-tier.ts): kept across instances and restarts, bounded in bytes, each with an expiry. Kept in
 * Redis (redis-answers.ts) or in memory (memory-answers.ts, the same behaviour for one process: the contract's
 * reference); answers.contract.ts runs against each. While Redis does not answer, the shared state's fallback answers
 * from NO_SHARED_ANSWERS: each instance keeps only what its memory tier keeps, as it does without the tier.
 *
 * Keys are the memory tier's (network, method, params, and the head for head-tied answers): they name the chain,
 * not an instance. A value is the JSON text of an answer's result, with the account whose call filled it.
 */
export interface SharedAnswers {
  /**
   * The answer kept under `key`; when there is none, the lease of filling it: `taken` (this caller fetches it for
   * everyone, for at most `leaseMs`) or `held` (another caller is fetching it: `awaitKept`). One round trip.
   */
  find(key: string, leaseMs: number): Promise<Found>;
  /** Keeps `value` under `key` for `ttlMs`, lets the lease go and wakes whoever awaits it. */
  keep(key: string, value: KeptAnswer, ttlMs: number): Promise<void>;
  /** Lets the lease of `key` go without an answer (the call failed, or its answer is not kept): waiters fetch. */
  release(key: string): Promise<void>;
  /** The answer once another caller keeps it (or releases it: undefined), or undefined after `waitMs`. */
  awaitKept(key: string, waitMs: number): Promise<KeptAnswer | undefined>;
  /** Drops every answer whose key starts with `prefix` (a network's, after a reorganisation below finality). */
  drop(prefix: string): Promise<void>;
  close(): Promise<void>;
}

/** A kept answer: the JSON text of its result, and the account whose call filled it (`X-Cache` says HIT to it only). */
export interface KeptAnswer {
  raw: string;
  filledBy: string;
}

export type Found = { kept: KeptAnswer } | { lease: 'taken' | 'held' };

/** What an answer costs the byte budget: its key, its text, and what the store keeps beside them. */
export const keptBytes = (key: string, value: KeptAnswer): number => key.length + value.raw.length + value.filledBy.length + 96;

/** The stand-in while the shared store does not answer: nothing kept, every lease this caller's. */
export const NO_SHARED_ANSWERS: SharedAnswers = {
  find: async () => ({ lease: 'taken' }),
  keep: async () => {},
  release: async () => {},
  awaitKept: async () => undefined,
  drop: async () => {},
  close: async () => {},
};
