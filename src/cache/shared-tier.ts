import type { KeptAnswer, SharedAnswers } from '../shared-state/answers/shared-answers.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';

/** `cache.shared` as the tier reads it. */
export interface SharedTierOptions {
  /** How long an answer that cannot change is kept (`cache.shared.ttlSeconds`, in ms). */
  ttlMs: number;
  /** How long an answer tied to the shared head is kept; 0: such answers are not shared. */
  headTtlMs: number;
  /** How long a miss waits for the same call another instance is making (its lease); 0: never waits. */
  waitMs: number;
}

/** Where a miss looks in the shared tier: its network, its key there, and how long its answer may be kept there. */
export interface SharedSlot {
  network: string;
  key: string;
  ttlMs: number;
}

/**
 * The shared cache tier behind a network's memory cache (docs/decisions.md §9): a memory miss asks it once (its key
 * and, when absent, the lease of fetching it, in one round trip), then either answers from what another instance
 * kept, waits briefly for the instance fetching the same call (within the caller's deadline), or fetches the answer
 * itself and keeps it for the others. Nothing here is on a memory hit's path. A Redis fault is the shared state's
 * fallback's: the tier then keeps nothing and every lease is the caller's (NO_SHARED_ANSWERS).
 */
export class SharedTier {
  /** Networks whose shared answers are being dropped: until it is done, their misses go to the node, and keep nothing. */
  private readonly dropping = new Map<string, Promise<void>>();

  constructor(private readonly answers: SharedAnswers, readonly o: SharedTierOptions) {}

  /**
   * The answer of `slot`: kept by an instance (a CachedAnswer, saying who filled it), or `call`'s. `keep(answer)`
   * says whether `call`'s answer may be kept for the others; `waitMs` bounds the wait for another instance's call.
   */
  async fetch(slot: SharedSlot, filledBy: string, call: () => Promise<UpstreamAnswer>, keep: (a: UpstreamAnswer) => boolean, waitMs: number): Promise<UpstreamAnswer> {
    if (this.dropping.size > 0 && this.dropping.has(slot.network)) return call();
    const found = await this.answers.find(slot.key, Math.max(1, this.o.waitMs));
    if ('kept' in found) return fromKept(found.kept);
    if (found.lease === 'held' && waitMs > 0) {
      const kept = await this.answers.awaitKept(slot.key, waitMs);
      if (kept) return fromKept(kept);
    }
    let answer: UpstreamAnswer;
    try {
      answer = await call();
    } catch (err) {
      if (found.lease === 'taken') void this.answers.release(slot.key);
      throw err;
    }
    // Kept or let go after the caller has its answer: no Redis round trip is added to a miss's time.
    if (answer.error === undefined && keep(answer)) {
      void this.answers.keep(slot.key, { raw: answer.raw ?? JSON.stringify(answer.result ?? null), filledBy }, slot.ttlMs);
    } else if (found.lease === 'taken') {
      void this.answers.release(slot.key);
    }
    return answer;
  }

  /** Drops the shared answers of `network` (a reorganisation below its finality depth). */
  dropNetwork(network: string): Promise<void> {
    return this.drop(network, `${network}\u0000`);
  }

  /** Drops the shared answers of `network` tied to its head (any reorganisation). */
  dropHead(network: string): Promise<void> {
    return this.drop(network, `${network}\u0000@`);
  }

  private drop(network: string, prefix: string): Promise<void> {
    const before = this.dropping.get(network) ?? Promise.resolve();
    const done = before.then(() => this.answers.drop(prefix)).finally(() => {
      if (this.dropping.get(network) === done) this.dropping.delete(network);
    });
    this.dropping.set(network, done);
    return done;
  }
}

/** The key of an answer tied to head `head`: the head first, so that a network's are dropped by one prefix. */
export const headSlotKey = (network: string, head: number, rest: string): string => `${network}\u0000@${head}\u0000${rest}`;

/** An answer another instance kept, shaped as the memory cache's entries are (response-cache.ts `CachedAnswer`). */
function fromKept(kept: KeptAnswer): UpstreamAnswer & { filledBy: string } {
  return { result: JSON.parse(kept.raw), error: undefined, raw: kept.raw, filledBy: kept.filledBy };
}
