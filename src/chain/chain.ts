import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { Pacer } from '../background/pacer.ts';
import { turnNow } from '../background/turn-clock.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Upstream, UpstreamAnswer } from '../upstream/upstream.ts';
import { HEAD_BOUND, type HeadBound } from './agreed-head.ts';
import { ChainHead } from './chain-head.ts';
import { ChainWindow, type BlockRef, type ReorgChange } from './chain-window.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import { describe } from '../methods/specs.ts';
import { pinLatest } from './pin-latest.ts';
import { blockOf } from './block-of.ts';
import { BlockFollowing } from './block-following.ts';
import { BLOCK_READ_MS, BlockReads } from './block-reads.ts';
import { ChainIdProbe } from './chain-id-probe.ts';
import { CheckLoop } from './check-loop.ts';
import { CheckRound } from './check-round.ts';
import { HoldingsProbe } from './holdings-probe.ts';
import { NodeHeads } from './node-heads.ts';
import { Verifier } from './verify/verifier.ts';
import type { HealthPolicy, UpstreamMember } from './upstream-member.ts';
import { UpstreamPool, type Route } from './upstream-pool.ts';
import { UpstreamStatuses, type UpstreamStatus } from './upstream-status.ts';

export type { BlockRef } from './chain-window.ts';
export type { UpstreamStatus } from './upstream-status.ts';

/** What the chain module tells its subscribers (docs/decisions.md §9). */
export interface ChainEvents {
  /** The head moved forward to this block number. */
  head: [number];
  /**
   * The chain was reorganised or went back, as the chain window tells it (chain-window.ts): `to` is the last block
   * both branches share, `from` the old head; `dropped` the blocks no longer canonical, when the blocks were being
   * followed (someone listens for `block`).
   */
  reorg: [ReorgChange];
  /**
   * A new canonical block, each once and in order, while someone listens (webhooks); after a reorg, the new branch
   * (the chain window's `block` change).
   */
  block: [BlockRef];
  /** The chain was replaced (an embedded chain restarted: its anvil replaced, the journal replayed). */
  reset: [];
  /** A transaction went out through the gateway; its hash. */
  transaction: [string];
  /** An upstream changed state (up, down, lagging, refused). */
  upstream: [UpstreamStatus];
}

/**
 * One network's chain (docs/decisions.md §9): the only part of the gateway that asks nodes for the head. It owns the
 * upstream pool and routes every call through it; it checks each upstream (chain id when it (re)appears, head
 * every `upstreams.checkIntervalMs`) and keeps the network's head from those checks and from every answer; it
 * tells subscribers (cache, filters, webhooks, analytics) what happened as events. With more than one upstream,
 * `latest` in a call is pinned to the agreed head and the call routed to an upstream that has that block, so that
 * `eth_blockNumber` and a later `eth_getBlockByNumber("latest")` never disagree because two nodes do.
 */
export class Chain extends EventEmitter<ChainEvents> implements Upstream {
  readonly head: ChainHead;
  readonly pool: UpstreamPool;
  readonly label: string;
  /**
   * A caller came since the last round of checks (check-loop.ts): the hot path tests it, and calls `wake` when it is
   * false (once a round).
   */
  asked = true;
  /**
   * The recent canonical blocks (chain-window.ts), only while someone listens for `block`: where reorganisations
   * are recognised, once for the network. Its changes are this module's `block` and `reorg` events.
   */
  readonly window: ChainWindow;
  /** When rounds of checks run (check-loop.ts), what a round does (check-round.ts). */
  private readonly loop: CheckLoop;
  private readonly round: CheckRound;
  /** The nodes' heads and the head they agree on (node-heads.ts). */
  private readonly heads: NodeHeads;
  /** Which chain each node serves (chain-id-probe.ts). */
  private readonly chainIds: ChainIdProbe;
  private readonly statuses: UpstreamStatuses;
  private readonly reads: BlockReads;
  private readonly following: BlockFollowing;
  /** The background search for what each upstream holds (holdings-probe.ts); absent: not probed. */
  private holdings: HoldingsProbe | undefined;

  constructor(
    readonly network: string,
    readonly chainId: number,
    readonly members: readonly UpstreamMember[],
    policy: HealthPolicy,
    finalityDepth: number,
    private readonly checkIntervalMs: number,
    private readonly log: Logger,
    /** How far one node's head is believed ahead of the others (agreed-head.ts); undefined: an embedded chain. */
    headBound: HeadBound | undefined = HEAD_BOUND,
  ) {
    super();
    this.pool = new UpstreamPool(members, policy, () => this.heads.best(), log, turnNow);
    this.pool.lagFrom = () => this.heads.lagFrom();
    this.pool.seenHead = () => this.head.number;
    this.pool.confirm = (m) => this.chainIds.confirm(m);
    this.pool.jumpBlocks = headBound?.slackBlocks;
    this.pool.network = network;
    // Answers of nodes by URL are checked, one node or several (one alone that fails a check gives an error, never
    // the answer); Nodegate's own anvil is not (its policy says off: networks.ts).
    if (policy.verify !== undefined && policy.verify !== 'off') {
      this.pool.verifier = new Verifier(policy.verify, {
        readBlock: (n, not, sound) => this.pool.readBlock(n, not, sound, BLOCK_READ_MS),
        knownHash: (n) => (this.head.final(n) ? this.window.at(n)?.hash : undefined),
        final: (n) => this.head.final(n),
      });
    }
    for (const m of members) {
      // No member serves before its chain id is read (start), nor after its connections all dropped.
      m.unconfirmed = true;
      m.upstream.onDropped = () => { m.unconfirmed = true; };
    }
    this.label = this.pool.label;
    const listening = () => this.listenerCount('block') > 0;
    this.loop = new CheckLoop(this, checkIntervalMs, (idle) => this.round.run(idle), listening);
    this.window = new ChainWindow((n) => this.reads.followed(n));
    this.window.subscribe((c) => {
      if (c.type === 'block') return void this.emit('block', c.block);
      this.pool.verifier?.clear();
      if (c.dropped.length > 0) this.log.warn({ from: c.from, to: c.to, depth: c.depth }, 'chain reorganised; cached answers of this network dropped');
      this.emit('reorg', c);
    });
    this.head = new ChainHead(finalityDepth, log, () => void this.loop.check(), {
      advanced: (n) => this.emit('head', n),
      // The head going back is a reorganisation too: the window drops what it held above `to` and says so.
      wentBack: (from, to) => this.window.wentBack(from, to),
    }, headBound);
    this.heads = new NodeHeads(members, policy, this.head, this.pool, checkIntervalMs, headBound);
    this.head.agreedOnly = this.heads.byQuorum();
    this.statuses = new UpstreamStatuses(network, policy, this.head, () => this.heads.lagFrom(), (s) => this.emit('upstream', s), log);
    this.reads = new BlockReads((method, params, timeoutMs, route) => this.call(method, params, timeoutMs, route), this.head, this.window, this.pool, members, this.heads);
    this.following = new BlockFollowing(members, this.head, this.heads, this.window, this.reads, listening, log);
    this.round = new CheckRound({
      members, pool: this.pool, policy, head: this.head, heads: this.heads, statuses: this.statuses, checkIntervalMs,
      confirm: (m) => this.chainIds.confirm(m),
      started: () => this.loop.started,
      follow: () => this.following.afterRound(),
    });
    this.chainIds = new ChainIdProbe(chainId, members, this.pool, checkIntervalMs, log, (m) => this.round.checkOne(m), (m) => this.statuses.note(m, this.heads.best()));
  }

  /** Checks every upstream once (a dead one is a warning, not silence), then every `checkIntervalMs`. */
  async start(): Promise<void> {
    await this.check();
    for (const s of this.status()) {
      if (s.state === 'down') this.log.warn({ upstream: s.upstream, error: s.error }, 'upstream unreachable at start; calls go to the others until it answers');
    }
    this.loop.start();
    this.chainIds.start();
    this.holdings?.start();
  }

  /**
   * What each upstream holds (the oldest block of its state and of its history) is probed at start and every
   * `intervalMs` while the network is called (networks of several upstreams; 0: never).
   */
  probeHoldings(intervalMs: number): void {
    if (intervalMs > 0 && this.members.length > 1) this.holdings = new HoldingsProbe(this.pool, this.members, intervalMs, Math.max(2000, this.checkIntervalMs), this.log);
  }

  /**
   * A round every `everyMs` instead of every checkIntervalMs while the network is idle: nobody called it for
   * `afterMs` and nothing follows its blocks (subscriptions, webhooks). Fifty idle networks of three nodes then
   * cost a tenth of the checks. Not for a network whose head is shared with other instances: they are called, this
   * one checks.
   */
  checkWhenIdle(everyMs: number, afterMs: number): void {
    this.loop.whenIdle(everyMs, afterMs, this.head.shared !== undefined);
  }

  /**
   * A caller asks the network (called when `asked` is false, once a round): nothing to wait for when the last
   * round is recent; after idle rounds were skipped, a round now, waited for at most checkIntervalMs, so the call
   * is answered from a fresh head, not one up to idleCheckMs old.
   */
  wake(): Promise<void> | undefined {
    return this.loop.wake();
  }

  stop(): void {
    this.loop.stop();
    this.chainIds.stop();
    this.following.stop();
    this.holdings?.stop();
  }

  /**
   * Reads member `m`'s chain id, once at a time (the checks and the calls waiting on it share the read): the
   * network's, it is confirmed and may take calls; another, it is refused; no answer, it stays as it was.
   */
  confirm(m: UpstreamMember): Promise<void> {
    return this.chainIds.confirm(m);
  }

  async close(): Promise<void> {
    this.stop();
    await this.pool.close();
  }

  /** The highest believed head among upstreams that answer, serve this chain and are not on another branch (node-heads.ts). */
  best(now = Date.now()): number | undefined {
    return this.heads.best(now);
  }

  /** Where lag is measured from (node-heads.ts). */
  lagFrom(now = Date.now()): number | undefined {
    return this.heads.lagFrom(now);
  }

  /** One round of checks of every upstream (one round at a time; callers share it). */
  check(idle = false): Promise<void> {
    return this.loop.check(idle);
  }

  /**
   * Following blocks is background work (it is done for webhooks): while callers are served, a round reads blocks
   * only while the background budget lasts (background/pacer.ts), and goes on at the next round.
   */
  pace(pacer: Pacer): void {
    this.following.pacer = pacer;
    if (this.holdings) this.holdings.pacer = pacer;
  }

  /**
   * Follows blocks from `from` on (a subscriber that persisted where it stopped: webhooks), instead of from the
   * head when following starts. Blocks mined while the gateway was down are then announced too.
   */
  resumeFollowing(from: BlockRef): void {
    this.window.seed(from);
  }

  /**
   * Starts following from the latest block now (a new subscriber for `block`): every block after the moment this
   * resolves is announced, also one mined before the next round of checks.
   */
  startFollowing(): Promise<void> {
    return this.following.start();
  }

  /** The header of block `hash` as a node pushed it lately (sent to subscribers as it is); undefined: not pushed. */
  pushedHeader(hash: string): Record<string, unknown> | undefined {
    return this.following.pushedHeader(hash);
  }

  /** Every upstream's state now, for `/readyz` and the banner. */
  status(): UpstreamStatus[] {
    const best = this.heads.best();
    return this.members.map((m) => this.statuses.of(m, best));
  }

  /** Some upstream can take calls. */
  ready(): boolean {
    return this.status().some((s) => s.state === 'up');
  }

  /**
   * Sends a call to the upstreams (the pipeline's `forward` stage and adapters come here). With several upstreams,
   * `latest` is pinned to the head first.
   */
  call(method: string, params: unknown[], timeoutMs: number, route: Route = {}, spec: MethodFacts = describe(method)): Promise<UpstreamAnswer> {
    const answer = this.route(spec, params, timeoutMs, route);
    // A block in a caller's answer (its spec shows a block, `seen: 'block'`) feeds the chain window (the next block
    // after its tip is taken at once).
    if (this.window.length === 0 || spec.seen !== 'block' || params[0] === 'pending') return answer;
    return answer.then((a) => {
      const b = blockOf(a.result);
      if (b) this.window.offer(b);
      return a;
    });
  }

  private route(spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route): Promise<UpstreamAnswer> {
    if (this.members.length > 1 && this.head.number !== undefined) {
      const pinned = pinLatest(spec, params, this.head.number, this.head);
      if (pinned) {
        // Only nodes behind the head callers were shown are left (the nodes ahead stopped answering):
        // what is at the head cannot be answered now, and a lagging node's "header not found" or older state is
        // not the answer. Calls at older blocks are still answered.
        if (this.pool.onlyLostHave(pinned.block, route)) {
          return Promise.reject(new GatewayError('UPSTREAM_UNAVAILABLE', { detail: `no node that answers has block ${pinned.block} yet` }));
        }
        // What the node must hold at the oldest block the call names (pruned nodes): only nodes that do are asked.
        const at = spec.holds === undefined ? { ...route, minBlock: pinned.block } : { ...route, minBlock: pinned.block, needs: spec.holds, oldest: pinned.from ?? pinned.block };
        return this.pool.call(spec.name, pinned.params, timeoutMs, at, spec);
      }
    }
    return this.pool.call(spec.name, params, timeoutMs, route, spec);
  }


  /** A write went through: the head is about to move, and subscribers hear of the transaction. */
  transactionSent(hash: unknown): void {
    this.head.moved();
    if (typeof hash === 'string') this.emit('transaction', hash);
  }

  /** The chain was replaced (an embedded chain restarted: its anvil replaced, the journal replayed). */
  reset(): void {
    this.head.reset();
    this.pool.verifier?.clear();
    this.emit('reset');
  }

  /**
   * Starts following from now, for a subscriber that must hear of every block after this moment (eth_subscribe):
   * the window, if empty, is seeded at the latest block at once, rather than at the next round's, which would
   * leave out a block mined in between (a subscription's first log).
   */
  followFromNow(): Promise<void> {
    return this.following.fromNow();
  }

  /** The head's block number, read from the upstreams first if it is not known yet. */
  async headNumber(): Promise<number | undefined> {
    if (this.head.number === undefined) await this.check();
    return this.head.number;
  }

  /**
   * The latest block: the upstreams' latest, or, if a caller was already shown a newer block, that block, once an
   * upstream has it (read-your-writes: block-reads.ts).
   */
  latestBlock(timeoutMs: number): Promise<BlockRef> {
    return this.reads.latest(timeoutMs);
  }

  /**
   * A block's number, hash and parent by number or tag, or undefined if the upstreams do not have it. The block is
   * offered to the chain window (the next block after its tip is taken at once).
   */
  blockAt(tag: string, timeoutMs: number): Promise<BlockRef | undefined> {
    return this.reads.at(tag, timeoutMs);
  }
}
