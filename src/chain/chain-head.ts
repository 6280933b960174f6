import type { Logger } from 'pino';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import { believableUpTo, type HeadBound } from './agreed-head.ts';
import { blockSeenIn } from './block-seen.ts';
import type { MethodSpec } from '../methods/method-spec.ts';
import { describe } from '../methods/specs.ts';
import type { SharedHead } from '../shared-state/heads/heads-hub.ts';

/** What the head tells the chain module, which turns it into events (chain/chain.ts). */
export interface HeadListener {
  advanced(n: number): void;
  wentBack(from: number, to: number): void;
}

/**
 * A network's head (docs/decisions.md §9), kept by the chain module: the cache, the filters and `eth_blockNumber` read it
 * here. It moves forward on two signals: the best head of the network's upstreams, read by the chain module's
 * health checks (`observe`), and every answer that shows a block (a receipt, a block, a log, a block number), at
 * once, so that nothing served afterwards is older than what a caller has already seen (read-your-writes). `epoch`
 * changes whenever the head moves, which ends every answer tied to `latest`. When the chain went backwards (an
 * embedded chain restarted and replayed from its journal, a deep reorganisation) the chain module says so as an event
 * (`reset`, `reorg`), on which the cache drops every answer of the network, final ones included.
 */
export class ChainHead {
  /** The newest block number known to exist, or undefined before the first answer. */
  number: number | undefined;
  /** The upstreams' `safe` and `finalized` blocks where they have them (read on networks of several upstreams). */
  safe: number | undefined;
  finalized: number | undefined;
  epoch = 0;
  /** When the head last moved (ms): how far it may be believed to jump (agreed-head.ts). */
  movedAt = Date.now();
  /** The last observation was below the head (once may be a node a moment behind; twice, the chain went back). */
  private behind = false;
  /**
   * `eth_blockNumber` answers this head, never a node's own number: on a network whose head is a quorum's block,
   * a node ahead alone (one mining a branch of its own, before the others reach its height and show it)
   * does not move it. Answers that show a block (a receipt, a block) still do (read-your-writes).
   */
  agreedOnly = false;

  constructor(
    private readonly finalityDepth: number,
    private readonly log: Logger,
    /** Asks the chain module to read the upstreams' heads now (after a write). */
    private readonly poll: () => void,
    private readonly listener: HeadListener,
    /** How far an answer may move the head at once; undefined: any distance (an embedded chain). */
    readonly bound: HeadBound | undefined = undefined,
  ) {}

  /**
   * Block `n` may be taken as existing on an answer's word alone: within what time allows since the head last
   * moved. A node claiming far more (block 10^12) is held back by the chain module until others confirm it.
   */
  believable(n: number, now = Date.now()): boolean {
    return this.bound === undefined || n <= believableUpTo({ head: this.number, at: this.movedAt }, now, this.bound);
  }

  /** Block `n` is at or below the finality depth: an answer about it cannot change any more. */
  final(n: number): boolean {
    return (this.number !== undefined && n <= this.number - this.finalityDepth) || (this.finalized !== undefined && n <= this.finalized);
  }

  /** The upstreams' safe or finalized block moved on (never back: a node behind the others does not undo it). */
  settled(tag: 'safe' | 'finalized', n: number): void {
    const was = this[tag];
    if (was === undefined || n > was) this[tag] = n;
  }

  /**
   * Cluster mode (shared-state/heads/): the head every instance shares. A block this instance takes as existing is
   * published, and `announced` holds the answers that show it until Redis has it.
   */
  shared: SharedHead | undefined;
  private announcing = 0;
  private lastAnnounce: Promise<void> | undefined;

  /**
   * Block `n` exists (an answer showed it, or, `fromCluster`, another instance published it): the head moves to it
   * if it is newer. A block learnt here is published to the other instances.
   */
  advance(n: number, fromCluster = false): void {
    if (this.number !== undefined && n <= this.number) return;
    this.number = n;
    this.movedAt = Date.now();
    this.epoch++;
    if (this.shared && !fromCluster) {
      this.announcing++;
      // Published in order on one connection: the last one's reply comes after every earlier one's.
      this.lastAnnounce = this.shared.publish(n).finally(() => { this.announcing--; });
    }
    this.listener.advanced(n);
  }

  /**
   * While a block this instance took as existing is not yet known to the other instances: the promise of its
   * publication, which an answer showing it or tied to it waits for (so that a caller who saw it here never finds an
   * older head on another instance). Undefined otherwise, and always on one instance.
   */
  announced(): Promise<void> | undefined {
    return this.announcing > 0 ? this.lastAnnounce : undefined;
  }

  /**
   * Moves the head to any newer block `answer` to `method(params)` shows, and returns the answer a caller may see:
   * `eth_blockNumber` never below a block some caller was already shown (a node a moment behind, or another
   * upstream). Cheap for methods that show no block.
   */
  seen(method: string, params: unknown[], answer: UpstreamAnswer): UpstreamAnswer {
    return this.sawBlock(describe(method), answer.error === undefined ? blockSeenIn(method, params, answer.result) : undefined, answer);
  }

  /** `seen`, for a caller that already read the block the answer shows (the head stage keeps it on the call). */
  sawBlock(spec: Pick<MethodSpec, 'seen'>, n: number | undefined, answer: UpstreamAnswer): UpstreamAnswer {
    if (answer.error !== undefined || n === undefined) return answer;
    // Below what a caller saw, or a jump no chain makes (a lying node): the head as the chain module holds it.
    if (spec.seen === 'quantity' && this.number !== undefined && (this.agreedOnly || n < this.number || !this.believable(n))) return { result: `0x${this.number.toString(16)}` };
    if (!this.believable(n)) return answer;
    this.advance(n);
    return answer;
  }

  /**
   * A write went through: the head is about to move (anvil mines right after answering). The answers tied to
   * `latest` end now, and the head is read again, so that the block's number is known as soon as it exists.
   */
  moved(): void {
    this.epoch++;
    this.poll();
    // anvil may answer a transaction a moment before its block exists: look again shortly.
    setTimeout(this.poll, 50).unref();
  }

  /** The chain was replaced (an embedded chain restarted and replayed from its journal): nothing known about it holds. */
  reset(): void {
    this.epoch++;
    this.number = undefined;
    this.movedAt = Date.now();
    this.safe = undefined;
    this.finalized = undefined;
  }

  /**
   * The best head of the upstreams, as read by a health check. Below what a caller was shown: the node may only
   * be a moment behind (it answered a receipt before it counted the block), or the chain went back. Only an
   * observation that stays below twice is taken as the chain going back; until then the head holds.
   */
  observe(n: number): void {
    if (n === this.number) {
      this.behind = false;
      return;
    }
    if (this.number !== undefined && n < this.number) {
      if (!this.behind) {
        this.behind = true;
        return;
      }
      const from = this.number;
        this.log.warn({ from, to: n }, 'the chain went back; cached answers of this network dropped');
      this.number = n;
      this.movedAt = Date.now();
      this.epoch++;
      this.behind = false;
      void this.shared?.lower(n);
      this.listener.wentBack(from, n);
      return;
    }
    this.behind = false;
    this.advance(n);
  }
}
