import type { Holds } from '../methods/method-spec.ts';

/**
 * The oldest block of one kind (state, or history: blocks, receipts, logs) one node holds. A pruned node's window
 * slides with its head (geth keeps the state of the last 128 blocks; reth and Erigon prune by distance), so it is
 * kept relative to the head it was found at; a fixed one (an archive node, geth's history expiry at the merge
 * block) stays where it is.
 */
export interface Holding {
  /** The oldest block held when the head was `at`. */
  readonly from: number;
  /** The head when `from` was found; undefined: fixed, whatever the head. */
  readonly at: number | undefined;
  /** How it is known: configured (`archive`, `stateWindow`), probed, or learnt from an answer. */
  readonly by: 'configured' | 'probed' | 'answered';
}

/** What one node holds of each kind; a kind absent is not known, and taken as every block (as before probing). */
export type Holdings = Partial<Record<Holds, Holding>>;

/** An archive node's: every block. */
export const EVERY_BLOCK: Holding = { from: 0, at: undefined, by: 'configured' };

/** The oldest block `h` holds at head `head`. */
export function oldestHeld(h: Holding, head: number | undefined): number {
  if (h.at === undefined || head === undefined) return h.from;
  return Math.max(0, h.from + Math.max(0, head - h.at));
}

/** The last `blocks` blocks, whatever the head (`stateWindow`). */
export function lastBlocks(blocks: number): Holding {
  return { from: 1 - blocks, at: 0, by: 'configured' };
}

/**
 * A probe found `from` the oldest block held at head `head`. The first finding is taken as sliding (unless it is
 * block 0 or 1: every block); a later one whose oldest block stayed put while the head moved on shows a fixed one.
 */
export function probed(was: Holding | undefined, from: number, head: number): Holding {
  if (from <= 1) return { from: 0, at: undefined, by: 'probed' };
  if (was?.by === 'probed' && was.at !== undefined && head - was.at >= 8 && from - was.from <= (head - was.at) / 2) return { from, at: undefined, by: 'probed' };
  return { from, at: head, by: 'probed' };
}

/**
 * An answer showed that block `n` is not held (`held` false: "missing trie node", "pruned") or is (a result), at
 * head `head`: the holding that follows, or undefined when `was` already says so.
 */
export function learnt(was: Holding | undefined, n: number, held: boolean, head: number | undefined): Holding | undefined {
  const oldest = was === undefined ? 0 : oldestHeld(was, head);
  if (held) return was !== undefined && n < oldest ? { from: n, at: was.at === undefined ? undefined : head, by: 'answered' } : undefined;
  if (n < oldest) return undefined;
  // Not held: kept sliding with the head (a pruned node's window moves on) until a probe says otherwise.
  return { from: n + 1, at: head, by: 'answered' };
}

/** For /readyz: the oldest block held now, and the window's size when it slides. */
export function shownHolding(h: Holding, head: number | undefined): { from: number; blocks?: number; by: Holding['by'] } {
  const from = oldestHeld(h, head);
  return h.at === undefined || head === undefined ? { from, by: h.by } : { from, blocks: Math.max(0, head - from + 1), by: h.by };
}
