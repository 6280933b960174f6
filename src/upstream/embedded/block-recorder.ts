import type { Upstream } from '../upstream.ts';
import type { ChainJournal } from './chain-journal.ts';

const CALL_MS = 10_000;

/**
 * Journals the blocks of `node` after the journal's last one: up to `head` when the chain module reported one,
 * else every block the node holds (read one by one until the next is absent; the supervisor never asks the node
 * for its head, docs/decisions.md §9). Each block's timestamp, hash and signed transactions (from memory when the gateway
 * journaled them on acceptance, else asked from anvil). Used as senders wait for their block, as the chain module reports heads, at a graceful
 * stop, after a replay, on an anvil a SIGKILLed Nodegate left behind, and to bring a data directory of the
 * snapshot design into the journal. A few small calls per block: it never holds anvil up. Returns the blocks
 * journaled.
 */
export async function recordBlocks(node: Upstream, journal: ChainJournal, head = Infinity): Promise<number> {
  let n = 0;
  while (journal.lastBlock < head) {
    const number = journal.lastBlock + 1;
    const b = (await node.call('eth_getBlockByNumber', [`0x${number.toString(16)}`, false], CALL_MS)).result as
      | { hash: string; timestamp: string; transactions: string[] } | null;
    if (!b && head === Infinity) break;
    if (!b) throw new Error(`block ${number} not found on the node`);
    const txs: Array<[string, string]> = [];
    for (const h of b.transactions) {
      const raw = journal.pendingRaw(h) ?? (await node.call('eth_getRawTransactionByHash', [h], CALL_MS)).result;
      if (typeof raw !== 'string') throw new Error(`the raw transaction ${h} of block ${number} could not be had`);
      txs.push([h, raw]);
    }
    journal.appendBlock({ block: number, ts: Number(b.timestamp), hash: b.hash, txs });
    n++;
  }
  return n;
}

/**
 * Keeps the journal up with the heads the chain module reports: one catch-up at a time, the next one
 * covering every head reported meanwhile.
 */
export class BlockRecorder {
  private wanted = 0;
  private running: Promise<void> | undefined;
  /** Why the last catch-up stopped short (the node, or a journal that cannot be written). */
  private lastError: unknown;

  constructor(
    private readonly node: Upstream,
    private readonly journal: ChainJournal,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** The chain is at `head` at least: journal up to it (in the background). */
  headSeen(head: number): void {
    this.wanted = Math.max(this.wanted, head);
    if (!this.running) this.running = this.loop().finally(() => { this.running = undefined; });
  }

  /**
   * Resolves once block `n` is journaled and on the disk: a sender is answered only then, so no block a client
   * learnt of through its transaction is mined again under another hash after a crash. Rejects with why it is not.
   */
  async upTo(n: number): Promise<void> {
    for (let tries = 0; this.journal.lastBlock < n; tries++) {
      if (tries > 0 && !this.running && this.lastError) throw this.lastError;
      if (tries > 2) throw new Error(`block ${n} could not be journaled`);
      this.headSeen(n);
      await this.running;
    }
    await this.journal.durable();
  }

  /** Journals every block the node holds, on the disk when it resolves (mining held for a checkpoint). */
  async toHead(): Promise<void> {
    await this.flush();
    await this.journal.durable();
  }

  /** Journals every block the node holds and resolves when done (a graceful stop); rejects if the node did not answer. */
  async flush(): Promise<void> {
    // Through the one catch-up loop: a second recordBlocks beside it would journal the same block twice.
    this.catchUp();
    while (this.running) await this.running;
    if (this.lastError) throw this.lastError;
  }

  /** Journals every block the node holds, in the background (after a replay mined the trailing transactions). */
  catchUp(): void {
    this.wanted = Infinity;
    if (!this.running) this.running = this.loop().finally(() => { this.running = undefined; });
  }

  private async loop(): Promise<void> {
    this.lastError = undefined;
    while (this.journal.lastBlock < this.wanted) {
      try {
        const wanted = this.wanted;
        await recordBlocks(this.node, this.journal, wanted);
        // A catch-up to the node's last block is done once it found no next one.
        if (wanted === Infinity) {
          if (this.wanted === Infinity) this.wanted = this.journal.lastBlock;
          return;
        }
      } catch (err) {
        // The node restarts or is gone: the next head (or the stop) tries again; the journal keeps its order.
        this.lastError = err;
        this.onError(err);
        return;
      }
    }
  }
}
