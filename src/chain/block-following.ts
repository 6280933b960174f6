import type { Logger } from 'pino';
import type { Pacer } from '../background/pacer.ts';
import { BLOCK_READ_MS, type BlockReads } from './block-reads.ts';
import type { ChainHead } from './chain-head.ts';
import type { ChainWindow } from './chain-window.ts';
import { HeadPushes, type PushedHead } from './head-pushes.ts';
import type { NodeHeads } from './node-heads.ts';
import type { UpstreamMember } from './upstream-member.ts';

/** New blocks read per round of checks at most; the rest come at the next round. */
const BLOCKS_PER_ROUND = 256;

/**
 * Following the network's blocks into the chain window (chain-window.ts), while someone listens for the chain's
 * `block` (webhooks, subscriptions): after each round of checks and at each node's push of a new head
 * (head-pushes.ts), the window is brought up to the head, each block once and in order, a pushed header taken as it
 * is when it names the window's tip as its parent. Nobody listening, nothing is read nor pushed.
 */
export class BlockFollowing {
  /**
   * Following blocks is background work (it is done for webhooks): while callers are served, a round reads blocks
   * only while the background budget lasts (background/pacer.ts), and goes on at the next round.
   */
  pacer: Pacer | undefined;
  /** The nodes' own pushes of new heads, followed while blocks are (head-pushes.ts). */
  private readonly pushes: HeadPushes;
  /** The run of `run` under way, and whether it was asked for again meanwhile. */
  private running: Promise<void> | undefined;
  private more = false;

  constructor(
    private readonly members: readonly UpstreamMember[],
    private readonly head: ChainHead,
    private readonly heads: NodeHeads,
    private readonly window: ChainWindow,
    private readonly reads: BlockReads,
    /** Someone listens for the chain's `block`. */
    private readonly listening: () => boolean,
    private readonly log: Logger,
  ) {
    this.pushes = new HeadPushes(members, (m, h) => this.pushed(m, h));
  }

  /** After a round of checks: the window brought up to the head, or, nobody listening, following stopped. */
  async afterRound(): Promise<void> {
    if (this.listening()) {
      this.pushes.start();
      await this.run();
    } else {
      // Nobody listens: nothing is read nor pushed, and following starts afresh when someone does.
      this.pushes.stop();
      this.window.clear();
    }
  }

  /** Starts following from the latest block now, unless the window holds blocks already (`Chain.startFollowing`). */
  async start(): Promise<void> {
    this.pushes.start();
    if (this.window.length > 0) return;
    const b = await this.reads.read('latest', BLOCK_READ_MS);
    if (b) this.window.seed(b);
  }

  /** The window, if empty, seeded at the latest block at once (`Chain.followFromNow`). */
  async fromNow(): Promise<void> {
    this.pushes.start();
    if (this.window.tip !== undefined) return;
    const b = await this.reads.latest(BLOCK_READ_MS);
    if (this.window.tip === undefined) this.window.seed(b);
  }

  /** Unsubscribes from the nodes' pushes. */
  stop(): void {
    this.pushes.stop();
  }

  /** The header of block `hash` as a node pushed it lately (sent to subscribers as it is); undefined: not pushed. */
  pushedHeader(hash: string): Record<string, unknown> | undefined {
    return this.pushes.byHash(hash)?.header;
  }

  /**
   * Brings the window up to the head, one run at a time (a round of checks and the nodes' pushes both ask): asked
   * while a run is under way, it runs once more after it, so that the head reached meanwhile is followed too.
   */
  private run(): Promise<void> {
    this.more = true;
    return (this.running ??= (async () => {
      while (this.more) {
        this.more = false;
        await this.once().catch((err) => this.log.debug({ err: String(err) }, 'following blocks failed; next round or push'));
      }
    })().finally(() => { this.running = undefined; }));
  }

  /**
   * The head is the block after the window's tip and a node pushed its header, which names the tip as its parent:
   * it is added as it is, with no read (the new head reaches subscribers as soon as it is agreed). Anything else (a
   * block missed between pushes, a head on another node's branch, no push at all) is read as the rounds read it.
   */
  private async once(): Promise<void> {
    const tip = this.window.tip;
    const head = this.head.number;
    if (tip !== undefined && head === tip.number + 1) {
      const at = this.heads.agreedBlock;
      const pushed = this.heads.byQuorum() ? (at?.number === head ? this.pushes.byHash(at.hash) : undefined) : this.pushes.at(head);
      if (pushed !== undefined && pushed.block.parentHash === tip.hash) {
        await this.window.add(pushed.block);
        return;
      }
    }
    await this.follow();
  }

  /**
   * Reads the blocks since the window's tip into the chain window, which recognises a reorganisation (a block whose
   * parent is not the window's block at that height) and walks it back; the next round goes on from the shared block.
   */
  private async follow(): Promise<void> {
    const head = this.head.number;
    if (head === undefined) return;
    const w = this.window;
    if (w.tip === undefined) {
      const b = await this.reads.followed(head);
      if (b) w.seed(b);
      return; // where following starts: announced blocks are those that come after it
    }
    // The tip first: replaced at the same height (the commonest reorganisation) shows as another hash there.
    const tip = await this.reads.followed(w.tip.number);
    if (tip) await w.add(tip);
    const last = w.tip!.number;
    for (let n = last + 1; n <= Math.min(head, last + BLOCKS_PER_ROUND) && (this.pacer?.mayRun() ?? true); n++) {
      const started = Date.now();
      const b = await this.reads.followed(n);
      this.pacer?.charge(Date.now() - started);
      if (!b) return; // not on the upstreams yet
      const added = await w.add(b);
      if (added === 'reorg' || added === 'gap') return; // the next round goes on from the window's tip
    }
  }

  /**
   * A node pushed a new head (head-pushes.ts): taken as its check would take its latest block, and the network's head
   * agreed again from every node's latest, as a round does (node-heads.ts `afterPush`). A head that moves on is
   * followed at once. What a push cannot tell (a node on another branch, a node gone quiet, the head going back) is
   * left to the rounds of checks.
   */
  private pushed(m: UpstreamMember, { block: b }: PushedHead): void {
    if (m.unconfirmed || m.refused) return;
    if (this.members.length > 1) {
      if (m.block !== undefined && b.number < m.block.number) return; // a branch switch: the next check reads it
      m.noteLatest(b.number, b.hash, b.parentHash);
      if (b.parentHash !== undefined) m.noteHash(b.number - 1, b.parentHash);
    }
    if (m.head === undefined || b.number > m.head) m.head = b.number;
    const head = this.heads.afterPush(this.window);
    if (head === undefined) return;
    if (this.head.number === undefined || head > this.head.number) this.head.observe(head);
    if (this.listening()) void this.run();
  }
}
