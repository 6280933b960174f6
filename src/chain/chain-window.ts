/**
 * The recent canonical blocks of one network ("one chain window"): the only place where a
 * reorganisation is recognised. Fed by the chain module's reads of new blocks (its rounds of checks), by blocks
 * seen in answers, and by the head when it goes back; it tells its one subscriber (the chain module, which hands
 * the changes on as its `block` and `reorg` events to the cache, filters, webhooks and metrics) in one shape,
 * `ChainChange`. It imports nothing but the fetcher it is given, so every other folder may read it.
 */

/** A block as the chain hands it out: enough to tell it from another block at the same height. */
export interface BlockRef {
  number: number;
  hash: string;
  parentHash?: string;
}

/**
 * Blocks kept per network, and so the deepest reorganisation named block by block; deeper ones are taken as final
 * (PoS chains reorganise 1-2 blocks). The one window size: the filters and the webhooks keep what they reported
 * for as many blocks, no more.
 */
export const CHAIN_WINDOW_BLOCKS = 128;

/**
 * What the window tells, in order:
 * - `block`: a new canonical block, each once and in order (after a reorganisation, the new branch);
 * - `reorg`: the chain was reorganised or went back. `to` is the last block both branches share, `from` the old
 *   head, `depth` how many blocks went, and `dropped` the blocks of the window no longer canonical, oldest first
 *   (empty when nothing was being followed). The new branch follows as `block` changes.
 */
export type ChainChange =
  | { type: 'block'; block: BlockRef }
  | { type: 'reorg'; from: number; to: number; depth: number; dropped: BlockRef[] };

export type ReorgChange = Extract<ChainChange, { type: 'reorg' }>;

/** Reads the canonical block at a height from the nodes (undefined: they do not have it). */
export type BlockFetcher = (number: number) => Promise<BlockRef | undefined>;

/** What `add` did with a block. */
export type Added = 'seeded' | 'added' | 'known' | 'gap' | 'reorg';

export class ChainWindow {
  /** Oldest first, consecutive, each the parent of the next; at most `size`. */
  private blocks: BlockRef[] = [];
  private readonly listeners = new Set<(c: ChainChange) => void>();
  /** A reorganisation is being walked back (awaiting reads): blocks from answers are not taken meanwhile. */
  private walking = false;

  constructor(private readonly fetch: BlockFetcher, readonly size = CHAIN_WINDOW_BLOCKS) {
    if (!(size >= 1)) throw new Error('a chain window holds at least one block');
  }

  /** Calls `listener` with every change from now on; returns the way to stop. */
  subscribe(listener: (c: ChainChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The newest block in the window. */
  get tip(): BlockRef | undefined {
    return this.blocks.at(-1);
  }

  get length(): number {
    return this.blocks.length;
  }

  /** The window's block at height `n`, if it holds one. */
  at(n: number): BlockRef | undefined {
    const first = this.blocks[0];
    return first === undefined ? undefined : this.blocks[n - first.number];
  }

  /**
   * The canonical hash at height `n` as the window knows it, when the window holds `head` itself (so what it holds
   * up to there is that head's chain); undefined when it cannot say (not following, behind, or on another branch).
   */
  hashAt(n: number, head: { number: number; hash: string }): string | undefined {
    if (n > head.number || this.at(head.number)?.hash !== head.hash) return undefined;
    return this.at(n)?.hash;
  }

  /** Forgets every block (nobody follows any more, or the chain was replaced): the next block seeds it again. */
  clear(): void {
    this.blocks = [];
  }

  /** Starts from `b` when the window is empty (where following starts or resumes): `b` itself is not announced. */
  seed(b: BlockRef): void {
    if (this.blocks.length === 0) this.blocks.push(b);
  }

  /**
   * A canonical block read from the nodes. The block after the tip is announced if its parent is the tip; a block
   * that disagrees with the window (another parent, or another hash at a height it holds) means a reorganisation,
   * walked back to the block both branches share (`reorg`); the new branch's blocks are then to be added again from
   * there. A block past the tip + 1 is a `gap`: the blocks between are to be added first.
   */
  async add(b: BlockRef): Promise<Added> {
    const tip = this.tip;
    if (tip === undefined) {
      this.blocks.push(b);
      return 'seeded';
    }
    if (b.number > tip.number + 1) return 'gap';
    if (b.number === tip.number + 1) {
      if (b.parentHash === undefined || b.parentHash === tip.hash) {
        this.push(b);
        return 'added';
      }
    } else {
      const mine = this.at(b.number);
      if (mine === undefined || mine.hash === b.hash) return 'known'; // older than the window, or the same block
    }
    await this.reorganised(b);
    return 'reorg';
  }

  /**
   * A block seen in an answer: taken if it is the next one (its parent is the tip), at no cost. Anything else is
   * left to the chain module's next read (an answer may come from a node a moment behind, or on a losing branch).
   */
  offer(b: BlockRef): void {
    const tip = this.tip;
    if (tip === undefined || this.walking || b.number !== tip.number + 1 || b.parentHash !== tip.hash) return;
    this.push(b);
  }

  /**
   * The head went back from `from` to `to` (seen twice by the checks: chain-head.ts): the window's blocks above
   * `to` are no longer canonical, and one `reorg` says so.
   */
  wentBack(from: number, to: number): void {
    const keep = this.blocks.findIndex((x) => x.number > to);
    const dropped = keep < 0 ? [] : this.blocks.splice(keep);
    this.emit({ type: 'reorg', from, to, depth: from - to, dropped });
  }

  private push(b: BlockRef): void {
    this.blocks.push(b);
    if (this.blocks.length > this.size) this.blocks.shift();
    this.emit({ type: 'block', block: b });
  }

  private emit(c: ChainChange): void {
    for (const l of this.listeners) l(c);
  }

  /**
   * `seen` is canonical and disagrees with the window: its blocks are walked back (newest first, one read each,
   * at most the window's size) to the one both branches share, and `reorg` names the dropped ones.
   */
  private async reorganised(seen: BlockRef): Promise<void> {
    this.walking = true;
    try {
      const from = this.blocks[this.blocks.length - 1].number;
      const dropped: BlockRef[] = [];
      while (this.blocks.length > 0) {
        const mine = this.blocks[this.blocks.length - 1];
        const canonical = mine.number === seen.number ? seen : await this.fetch(mine.number);
        if (canonical && canonical.hash === mine.hash) break;
        dropped.unshift(this.blocks.pop()!);
      }
      if (this.blocks.length === 0) {
        // None of the window's blocks is canonical (a reorganisation deeper than the window, or at the very block
        // following resumed from after a restart): go on from the canonical parent of the oldest one dropped.
        const base = await this.fetch(dropped[0].number - 1);
        if (!base) {
          this.blocks = dropped; // the node did not answer: the next read looks again
          return;
        }
        this.blocks.push(base);
      }
      const to = this.blocks[this.blocks.length - 1].number;
      this.emit({ type: 'reorg', from, to, depth: dropped.length, dropped });
    } finally {
      this.walking = false;
    }
  }
}
