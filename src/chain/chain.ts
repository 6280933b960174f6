import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { Pacer } from '../background/pacer.ts';
import { turnNow } from '../background/turn-clock.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Upstream, UpstreamAnswer } from '../upstream/upstream.ts';
import { agreedHead, HEAD_BOUND, quorumHead, type HeadBound, type HeadClaim } from './agreed-head.ts';
import { ChainHead } from './chain-head.ts';
import type { NodesReport } from '../shared-state/heads/heads-hub.ts';
import { ChainWindow, type BlockRef, type ReorgChange } from './chain-window.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import { describe } from '../methods/specs.ts';
import { pinLatest } from './pin-latest.ts';
import { blockOf } from './block-of.ts';
import { HeadPushes, type PushedHead } from './head-pushes.ts';
import { HoldingsProbe } from './holdings-probe.ts';
import { shownHolding } from './holdings.ts';
import { Verifier } from './verify/verifier.ts';
import type { HealthPolicy, UpstreamMember } from './upstream-member.ts';
import { UpstreamPool, type Route } from './upstream-pool.ts';

export type { BlockRef } from './chain-window.ts';

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

/** One upstream as `/readyz`, the banner and the logs show it. */
export interface UpstreamStatus {
  network: string;
  upstream: string;
  role: string;
  /**
   * `suspect`: it claims a head far ahead of the agreed head that nothing confirms; `forked`: its block at a height
   * a quorum of nodes agrees on has another hash (it is on another branch). Neither takes calls.
   */
  state: 'up' | 'down' | 'lagging' | 'suspect' | 'forked' | 'refused' | 'unknown';
  chainId: number | undefined;
  head: number | undefined;
  lag: number | undefined;
  breaker: string;
  /** Its WebSocket for light reads (upstreams[].ws, the embedded chain's): open, or down (HTTP meanwhile). */
  socket?: 'open' | 'down';
  /** The widest eth_getLogs range it takes, configured or learnt from its refusals; absent: none known. */
  getLogsRange?: number;
  /** The most logs it answers, configured or as its refusals named; absent: none known. */
  getLogsResults?: number;
  /** Methods it does not serve, configured or learnt from its answers (for a while); absent: none. */
  lacks?: string[];
  /**
   * The oldest block whose state, and whose history (blocks, receipts, logs), it holds now, with the window's size
   * when it slides with the head and how it is known (configured, probed, answered); a kind absent: not known.
   */
  holds?: { state?: ReturnType<typeof shownHolding>; history?: ReturnType<typeof shownHolding> };
  /** Its answers that failed verification, by check (networks.<n>.verify); absent: none. */
  verifyFailures?: Record<string, number>;
  error?: string;
}

const hex = (n: number) => `0x${n.toString(16)}`;
/** How long a poll for the latest block waits for the upstreams to have a block that the head says exists. */
const CATCH_UP_MS = 2_000;
/** New blocks read per round of checks at most; the rest come at the next round. */
const BLOCKS_PER_ROUND = 256;
/** Time-out of the chain module's own block reads, ms. */
const BLOCK_READ_MS = 10_000;
/** Rounds of checks a lone node keeps to a held-back head before it is asked to serve that block. */
const HOLD_ROUNDS = 3;
/**
 * A node whose chain id is not confirmed (down, dropped, just started) is probed this soon after the last probe,
 * ms, doubling after each that finds it still down up to PROBE_MAX_MS: a fixed node is back within about a second
 * of answering, and a dead one costs a request a second.
 */
const PROBE_FIRST_MS = 100;
const PROBE_MAX_MS = 1000;

/** A member's latest block as a round's check read it, and its head (as answers raised it) at that moment. */
interface CheckedBlock {
  number: number;
  hash: string;
  headThen: number | undefined;
}
/** Block hashes read per pass of `agree` at most (two passes a round), to compare nodes at different heights. */
const HASH_READS = 4;

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
  private timer: NodeJS.Timeout | undefined;
  private prober: NodeJS.Timeout | undefined;
  /** When each member not confirmed may be probed next, and the gap after that (PROBE_FIRST_MS, doubling). */
  private readonly probes = new Map<UpstreamMember, { at: number; gap: number }>();
  private checking: Promise<void> | undefined;
  /**
   * The round under way is an idle one; an idle round ran since the last full one (chain ids of confirmed members
   * unread since): a caller waking the network waits for a full round.
   */
  private checkingIdle = false;
  private fullDue = false;
  /** The best head the safe and finalized blocks were last read at: they move only as the head does. */
  private settledAt: number | undefined;
  /**
   * Idle checks (`checkWhenIdle`): rounds the timer skips between two while the network is idle, 0 for none; after
   * how long without a caller it is idle (ms); `asked`, a caller came since the last round (the hot path tests it:
   * `wake`); when a round last found one (start counts as one); `skipped`, rounds skipped since the last.
   */
  private idleSkips = 0;
  private idleAfterMs = Infinity;
  asked = true;
  private askedAt = Date.now();
  private skipped = 0;
  private readonly states = new Map<UpstreamMember, UpstreamStatus['state']>();
  /** The last block a quorum agreed on, with its hash (networks of several nodes): the chain the window follows. */
  private agreedBlock: { number: number; hash: string } | undefined;
  /** The node the window last read from, kept while it is on the agreed chain (no hopping between nodes). */
  private windowNode: UpstreamMember | undefined;
  /**
   * The recent canonical blocks (chain-window.ts), only while someone listens for `block`: where reorganisations
   * are recognised, once for the network. Its changes are this module's `block` and `reorg` events.
   */
  readonly window: ChainWindow;
  private pacer: Pacer | undefined;
  /** The background search for what each upstream holds (holdings-probe.ts); absent: not probed. */
  private holdings: HoldingsProbe | undefined;
  /** The nodes' own pushes of new heads, followed while blocks are (head-pushes.ts). */
  private readonly pushes: HeadPushes;
  /** The run of `followBlocks` under way, and whether it was asked for again meanwhile. */
  private followRun: Promise<void> | undefined;
  private followMore = false;

  constructor(
    readonly network: string,
    readonly chainId: number,
    readonly members: readonly UpstreamMember[],
    private readonly policy: HealthPolicy,
    finalityDepth: number,
    private readonly checkIntervalMs: number,
    private readonly log: Logger,
    /** How far one node's head is believed ahead of the others (agreed-head.ts); undefined: an embedded chain. */
    private readonly headBound: HeadBound | undefined = HEAD_BOUND,
  ) {
    super();
    this.pool = new UpstreamPool(members, policy, () => this.best(), log, turnNow);
    this.pool.lagFrom = () => this.lagFrom();
    this.pool.seenHead = () => this.head.number;
    this.pool.confirm = (m) => this.confirm(m);
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
    this.window = new ChainWindow((n) => this.readFollowed(n));
    this.window.subscribe((c) => {
      if (c.type === 'block') return void this.emit('block', c.block);
      this.pool.verifier?.clear();
      if (c.dropped.length > 0) this.log.warn({ from: c.from, to: c.to, depth: c.depth }, 'chain reorganised; cached answers of this network dropped');
      this.emit('reorg', c);
    });
    this.head = new ChainHead(finalityDepth, log, () => void this.check(), {
      advanced: (n) => this.emit('head', n),
      // The head going back is a reorganisation too: the window drops what it held above `to` and says so.
      wentBack: (from, to) => this.window.wentBack(from, to),
    }, headBound);
    this.head.agreedOnly = this.byQuorum();
    this.pushes = new HeadPushes(members, (m, h) => this.pushed(m, h));
  }

  /** Checks every upstream once (a dead one is a warning, not silence), then every `checkIntervalMs`. */
  async start(): Promise<void> {
    await this.check();
    for (const s of this.status()) {
      if (s.state === 'down') this.log.warn({ upstream: s.upstream, error: s.error }, 'upstream unreachable at start; calls go to the others until it answers');
    }
    this.timer = setInterval(() => this.tick(), this.checkIntervalMs);
    this.timer.unref();
    this.prober = setInterval(() => this.probeUnconfirmed(), PROBE_FIRST_MS);
    this.prober.unref();
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
    this.idleSkips = this.head.shared ? 0 : Math.max(0, Math.ceil(everyMs / this.checkIntervalMs) - 1);
    this.idleAfterMs = afterMs;
  }

  private tick(): void {
    const now = Date.now();
    if (this.asked) this.askedAt = now;
    if (this.idleSkips > 0 && !this.asked && this.skipped < this.idleSkips && now - this.askedAt >= this.idleAfterMs && this.listenerCount('block') === 0) {
      this.skipped++;
      return;
    }
    const idle = this.skipped > 0;
    this.skipped = 0;
    this.asked = false;
    void this.check(idle);
  }

  /**
   * A caller asks the network (called when `asked` is false, once a round): nothing to wait for when the last
   * round is recent; after idle rounds were skipped, a round now, waited for at most checkIntervalMs, so the call
   * is answered from a fresh head, not one up to idleCheckMs old.
   */
  wake(): Promise<void> | undefined {
    this.asked = true;
    if (this.skipped === 0 && !this.fullDue) return undefined;
    this.skipped = 0;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((r) => { timer = setTimeout(r, this.checkIntervalMs); });
    // A full round under way serves; an idle one read no chain id: a full round after it.
    const full = this.checking && !this.checkingIdle ? this.checking : (this.checking ?? Promise.resolve()).then(() => this.check());
    return Promise.race([full, bound]).finally(() => clearTimeout(timer));
  }

  stop(): void {
    clearInterval(this.timer);
    clearInterval(this.prober);
    this.pushes.stop();
    this.holdings?.stop();
  }

  /**
   * Reads member `m`'s chain id, once at a time (the checks and the calls waiting on it share the read): the
   * network's, it is confirmed and may take calls; another, it is refused; no answer, it stays as it was.
   */
  confirm(m: UpstreamMember): Promise<void> {
    return (m.confirming ??= this.readChainId(m).finally(() => { m.confirming = undefined; }));
  }

  private async readChainId(m: UpstreamMember): Promise<void> {
    let id: UpstreamAnswer;
    try {
      id = await this.pool.probe(m, 'eth_chainId', [], Math.max(1000, this.checkIntervalMs));
    } catch {
      return; // recorded by the pool (breaker); probed again
    }
    if (typeof id.result !== 'string') return;
    m.chainId = Number(id.result);
    if (m.chainId !== this.chainId) {
      if (!m.refused) this.log.error({ upstream: m.label, chainId: m.chainId, expected: this.chainId }, 'upstream refused: it serves another chain');
      m.refused = true;
      m.unconfirmed = true;
      // What it said of its head is another chain's: nothing the network may believe.
      m.head = undefined;
      m.shown = undefined;
      m.block = undefined;
      m.hashes.clear();
      m.lastError = `chain id ${m.chainId} is not the network's ${this.chainId}`;
      return;
    }
    m.unconfirmed = false;
    this.probes.delete(m);
    if (m.refused) {
      m.refused = false;
      m.lastError = undefined;
      this.log.warn({ upstream: m.label, chainId: m.chainId }, "upstream serves the network's chain again");
    }
  }

  /**
   * Members whose chain id is not confirmed (down, dropped, refused) are probed between rounds of checks, each at
   * its own pace (PROBE_FIRST_MS doubling to PROBE_MAX_MS): one that answers with the network's chain id has its
   * head read and takes calls at once, not at the next round. Nothing is done while every member is confirmed.
   */
  private probeUnconfirmed(): void {
    const now = Date.now();
    for (const m of this.members) {
      if (!m.unconfirmed || m.confirming || m.resting(now)) continue;
      const due = this.probes.get(m);
      if (due && now < due.at) continue;
      const gap = due ? Math.min(PROBE_MAX_MS, due.gap * 2) : PROBE_FIRST_MS;
      this.probes.set(m, { at: now + gap, gap });
      void this.checkOne(m).then((read) => {
        if (read && !m.unconfirmed && (m.head === undefined || read.number > m.head)) m.head = read.number;
        this.noteState(m, this.best());
      });
    }
  }

  async close(): Promise<void> {
    this.stop();
    await this.pool.close();
  }

  /**
   * The highest believed head among upstreams that answer, serve this chain and are not on another branch
   * (agreed-head.ts: not far ahead of all the others, nor of what time allows): what lag is measured from. A member
   * above it is `suspect`. The network's head itself follows the quorum's block (`agree`) on networks of several.
   */
  best(now = Date.now()): number | undefined {
    return agreedHead(this.claims(now), { head: this.head.number, at: this.head.movedAt }, now, this.headBound).head;
  }

  /**
   * Where lag is measured from: the highest believed head, but with a quorum at most maxLagBlocks above the head
   * callers were shown. A node alone far ahead (one mining a branch of its own, before the others reach its height
   * and show it `forked`) does not make the others `lagging`: reads and raw transactions still reach them, and a
   * transaction is not left to that node's branch alone.
   */
  lagFrom(now = Date.now()): number | undefined {
    const front = this.best(now);
    const shown = this.head.number;
    return this.head.agreedOnly && front !== undefined && shown !== undefined ? Math.min(front, shown + this.policy.maxLagBlocks) : front;
  }

  /**
   * The agreed head is below the head callers were shown while a node that is not on another branch still has the
   * shown block: that is not the chain going back, and the head holds. Either the nodes that had it stopped
   * answering (their breaker is open; with only a node 3 blocks behind left, `eth_blockNumber` went back
   * from 44 to 41 and filters reported logs removed that no reorganisation had removed), or a node that answers is
   * ahead of the quorum (an answer of it showed a newer block: read-your-writes). Only when no such node has the
   * shown block any more is a lower head the chain going back (`ChainHead.observe`).
   */
  private shownStillHeld(head: number): boolean {
    const shown = this.head.number;
    if (shown === undefined || head >= shown) return false;
    const now = Date.now();
    const best = this.best(now);
    return this.members.some((m) => !m.refused && !m.forked && m.head !== undefined && m.head >= shown
      && (m.breaker(now) === 'open' || best === undefined || m.head <= best));
  }

  /**
   * The network's head is a quorum's block (agreed-head.ts `quorumHead`): several nodes and a quorum other than 1
   * (0 is a majority). Otherwise the highest believed head.
   */
  private byQuorum(): boolean {
    return this.members.length > 1 && (this.policy.quorum ?? 1) !== 1;
  }

  /** Each member's head, if it answers, serves this chain and is not on another branch. */
  private claims(now: number): Array<HeadClaim | undefined> {
    return this.members.map((m) => (m.unconfirmed || m.forked || m.head === undefined || m.breaker(now) === 'open' ? undefined : { head: m.head, served: m.served }));
  }

  /** One round of checks of every upstream (one round at a time; callers share it). */
  check(idle = false): Promise<void> {
    if (this.checking) return this.checking;
    this.checkingIdle = idle;
    this.fullDue = idle;
    return (this.checking = this.checkAll(idle).finally(() => { this.checking = undefined; this.checkingIdle = false; }));
  }

  /**
   * `idle`: a round of an idle network (`checkWhenIdle`), which serves nobody: confirmed members' chain ids are not
   * read (a caller waking it waits for a full round first).
   */
  private async checkAll(idle = false): Promise<void> {
    // Cluster mode: one instance checks the nodes (a lease), the others take its report.
    const shared = this.head.shared;
    const ttl = Math.max(1500, 3 * this.checkIntervalMs);
    // The first round is always this instance's own: it has to know its nodes answer it before it says it is ready.
    const report = shared && this.timer !== undefined && !(await shared.leads(ttl)) ? await shared.lastReport() : undefined;
    let agreed: number | undefined;
    if (report) {
      agreed = this.take(report);
    } else {
      const latest = await Promise.all(this.members.map((m) => this.checkOne(m, idle)));
      agreed = this.members.length > 1 ? await this.agree(latest) : undefined;
      await this.proveHeld();
      if (shared) void shared.report(this.reportOf(agreed), ttl);
    }
    const best = this.best();
    // The network's head follows the quorum's block; with a quorum of one (one node), the highest believed head.
    const head = this.byQuorum() ? agreed : best;
    if (head !== undefined && !this.shownStillHeld(head)) this.head.observe(head);
    for (const m of this.members) this.noteState(m, best);
    if (!report && this.members.length > 1 && best !== undefined) await this.readSettled(best);
    if (this.listenerCount('block') > 0) {
      this.pushes.start();
      await this.followBlocks();
    } else {
      // Nobody listens: nothing is read nor pushed, and following starts afresh when someone does.
      this.pushes.stop();
      this.window.clear();
    }
  }

  /**
   * Following blocks is background work (it is done for webhooks): while callers are served, a round reads blocks
   * only while the background budget lasts (background/pacer.ts), and goes on at the next round.
   */
  pace(pacer: Pacer): void {
    this.pacer = pacer;
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
  async startFollowing(): Promise<void> {
    this.pushes.start();
    if (this.window.length > 0) return;
    const b = await this.read('latest', BLOCK_READ_MS);
    if (b) this.window.seed(b);
  }

  /**
   * Brings the window up to the head, one run at a time (a round of checks and the nodes' pushes both ask): asked
   * while a run is under way, it runs once more after it, so that the head reached meanwhile is followed too.
   */
  private followBlocks(): Promise<void> {
    this.followMore = true;
    return (this.followRun ??= (async () => {
      while (this.followMore) {
        this.followMore = false;
        await this.followOnce().catch((err) => this.log.debug({ err: String(err) }, 'following blocks failed; next round or push'));
      }
    })().finally(() => { this.followRun = undefined; }));
  }

  /**
   * The head is the block after the window's tip and a node pushed its header, which names the tip as its parent:
   * it is added as it is, with no read (the new head reaches subscribers as soon as it is agreed). Anything else (a
   * block missed between pushes, a head on another node's branch, no push at all) is read as the rounds read it.
   */
  private async followOnce(): Promise<void> {
    const tip = this.window.tip;
    const head = this.head.number;
    if (tip !== undefined && head === tip.number + 1) {
      const at = this.agreedBlock;
      const pushed = this.byQuorum() ? (at?.number === head ? this.pushes.byHash(at.hash) : undefined) : this.pushes.at(head);
      if (pushed !== undefined && pushed.block.parentHash === tip.hash) {
        await this.window.add(pushed.block);
        return;
      }
    }
    await this.follow();
  }

  /**
   * A node pushed a new head (head-pushes.ts): taken as its check would take its latest block, and the network's head
   * agreed again from every node's latest, as a round does (the quorum's block with several nodes, the highest
   * believed head otherwise), without reading anything. A head that moves on is followed at once. What a push cannot
   * tell (a node on another branch, a node gone quiet, the head going back) is left to the rounds of checks.
   */
  private pushed(m: UpstreamMember, { block: b }: PushedHead): void {
    if (m.unconfirmed || m.refused) return;
    if (this.members.length > 1) {
      if (m.block !== undefined && b.number < m.block.number) return; // a branch switch: the next check reads it
      m.noteLatest(b.number, b.hash, b.parentHash);
      if (b.parentHash !== undefined) m.noteHash(b.number - 1, b.parentHash);
    }
    if (m.head === undefined || b.number > m.head) m.head = b.number;
    const now = Date.now();
    let head: number | undefined;
    if (this.byQuorum()) {
      const claims = this.members.map((x) => (x.unconfirmed || x.block === undefined || x.breaker(now) === 'open' ? undefined : { head: x.block.number, served: x.served }));
      const { believed } = agreedHead(claims, { head: this.head.number, at: this.head.movedAt }, now, this.headBound);
      const chains = this.members.map((x, i) => (claims[i] ? { block: x.block!, hashes: x.hashes } : undefined));
      const q = quorumHead(chains, believed, { size: this.policy.quorum ?? 1, maxLag: this.policy.maxLagBlocks }, this.members.map((x) => x.forked));
      const on = q.head === undefined ? undefined : this.members.find((x, i) => chains[i] && !q.forked[i] && hashOf(x, q.head!) !== undefined);
      if (q.head === undefined || on === undefined) return;
      head = q.head;
      const hash = hashOf(on, head)!;
      const moved = this.head.number === undefined || head > this.head.number;
      // The window holds another block at that height (the tip replaced): followed to recognise the reorganisation.
      const other = this.window.at(head) !== undefined && this.window.at(head)!.hash !== hash;
      if (!moved && !other) return;
      this.agreedBlock = { number: head, hash };
    } else {
      head = this.best(now);
      if (head === undefined || (this.head.number !== undefined && head <= this.head.number)) return;
    }
    if (this.head.number === undefined || head > this.head.number) this.head.observe(head);
    if (this.listenerCount('block') > 0) void this.followBlocks();
  }

  /** The header of block `hash` as a node pushed it lately (sent to subscribers as it is); undefined: not pushed. */
  pushedHeader(hash: string): Record<string, unknown> | undefined {
    return this.pushes.byHash(hash)?.header;
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
      const b = await this.readFollowed(head);
      if (b) w.seed(b);
      return; // where following starts: announced blocks are those that come after it
    }
    // The tip first: replaced at the same height (the commonest reorganisation) shows as another hash there.
    const tip = await this.readFollowed(w.tip.number);
    if (tip) await w.add(tip);
    const last = w.tip!.number;
    for (let n = last + 1; n <= Math.min(head, last + BLOCKS_PER_ROUND) && (this.pacer?.mayRun() ?? true); n++) {
      const started = Date.now();
      const b = await this.readFollowed(n);
      this.pacer?.charge(Date.now() - started);
      if (!b) return; // not on the upstreams yet
      const added = await w.add(b);
      if (added === 'reorg' || added === 'gap') return; // the next round goes on from the window's tip
    }
  }

  /**
   * The safe and finalized blocks, from an upstream at the best head (networks of several upstreams, where calls
   * naming them are pinned): two reads in a round where the best head moved (they move only with it; an idle
   * chain costs none). A node without them (null, an error) leaves them unknown; a failed read is tried next round.
   */
  private async readSettled(best: number): Promise<void> {
    if (best === this.settledAt) return;
    const m = this.members.find((x) => x.head === best && x.usable(best, this.policy, Date.now(), this.lagFrom()));
    if (!m) return;
    this.settledAt = best;
    await Promise.all((['safe', 'finalized'] as const).map(async (tag) => {
      try {
        const a = await this.pool.probe(m, 'eth_getBlockByNumber', [tag, false], Math.max(1000, this.checkIntervalMs));
        const n = (a.result as { number?: unknown } | null)?.number;
        if (typeof n === 'string') this.head.settled(tag, Number(n));
      } catch {
        this.settledAt = undefined; // recorded by the pool; the next round reads again
      }
    }));
  }

  /**
   * A node whose head is held back (too far ahead) and that is the only one answering: once it has kept to that
   * head for HOLD_ROUNDS rounds, it is asked for that block; a node that serves it has it (agreed-head.ts). One
   * read per held node per round; none while other nodes disagree (their heads decide).
   */
  private async proveHeld(): Promise<void> {
    const now = Date.now();
    const claims = this.claims(now);
    const { believed } = agreedHead(claims, { head: this.head.number, at: this.head.movedAt }, now, this.headBound);
    await Promise.all(this.members.map(async (m, i) => {
      const claim = claims[i];
      if (claim === undefined || believed[i]) {
        m.held = undefined;
        return;
      }
      m.held = m.held && claim.head >= m.held.head ? { head: claim.head, rounds: m.held.rounds + 1 } : { head: claim.head, rounds: 1 };
      const alone = claims.every((c, j) => j === i || c === undefined);
      if (!alone || m.held.rounds < HOLD_ROUNDS) return;
      try {
        const a = await this.pool.probe(m, 'eth_getBlockByNumber', [hex(claim.head), false], Math.max(1000, this.checkIntervalMs));
        const n = (a.result as { number?: unknown } | null)?.number;
        if (typeof n === 'string' && Number(n) === claim.head) m.served = claim.head;
      } catch {
        // Recorded by the pool; the next round asks again.
      }
    }));
  }

  /**
   * Its chain id and its head, every round, asked together (one request to a batching client). The chain id is asked
   * every time, not only when the node (re)appears: a URL whose node was replaced by one of another chain (a proxy
   * in front of nodes; its connections dropped while callers reopen others, so the last one never closes) is out
   * at the next round. A refused node is asked its chain id every round too, and is back as soon as it serves the
   * network's chain. Not in an idle round (`idle`: nobody is served; a caller waking the network waits for a full
   * round), unless the node is not confirmed. Both within the check's time-out, whatever the node's own for calls.
   */
  private async checkOne(m: UpstreamMember, idle = false): Promise<CheckedBlock | undefined> {
    if (m.resting()) return undefined;
    const timeout = Math.max(1000, this.checkIntervalMs);
    // With several nodes, their latest block (number and hash, in one request), to compare them (`agree`).
    const several = this.members.length > 1;
    const rereadId = !idle || m.unconfirmed;
    try {
      const [, a] = await Promise.all([
        rereadId ? this.confirm(m) : undefined,
        m.refused ? undefined : several ? this.pool.probe(m, 'eth_getBlockByNumber', ['latest', false], timeout) : this.pool.probe(m, 'eth_blockNumber', [], timeout),
      ]);
      if (m.unconfirmed) return undefined;
      if (several) {
        const b = blockOf(a?.result);
        if (!b) return undefined;
        m.noteLatest(b.number, b.hash, b.parentHash);
        return { number: b.number, hash: b.hash, headThen: m.head };
      }
      // Its head as it is now, also lower than before (a node that lost blocks); an answer raised it already.
      if (typeof a?.result === 'string') m.head = Number(a.result);
    } catch {
      // Recorded by the pool (breaker); the next round tries again.
    }
    return undefined;
  }

  /**
   * Networks of several nodes: the heads read this round are compared before any is taken (so no call goes to a
   * node on another branch in between), the agreed head is the highest block a quorum of them has with the same
   * hash (agreed-head.ts `quorumHead`), and a node whose block at a height the quorum agrees on has another hash is
   * `forked`. Hashes not known yet are read, a few per round (`HASH_READS`, twice at most), each kept by its member.
   * No agreement: the forked marks and the head stay as they were (undefined is returned).
   */
  private async agree(latest: ReadonlyArray<CheckedBlock | undefined>): Promise<number | undefined> {
    const size = this.policy.quorum ?? 1;
    const now = Date.now();
    // Its head as it is now, also lower than before (a node that lost blocks); an answer raised it already.
    const heads = this.members.map((m, i) => latest[i]?.number ?? m.head);
    const claims = this.members.map((m, i) => (m.unconfirmed || heads[i] === undefined || m.breaker(now) === 'open' ? undefined : { head: heads[i]!, served: m.served }));
    let agreed: number | undefined;
    if (this.byQuorum()) {
      const { believed } = agreedHead(claims, { head: this.head.number, at: this.head.movedAt }, now, this.headBound);
      const chains = this.members.map((m, i) => (claims[i] && latest[i] && m.block ? { block: m.block, hashes: m.hashes } : undefined));
      const rule = { size, maxLag: this.policy.maxLagBlocks };
      // A node found on another branch stays out of the count until it agrees again (agreed-head.ts).
      const wasForked = this.members.map((m) => m.forked);
      let q = quorumHead(chains, believed, rule, wasForked);
      for (let pass = 0; pass < 2 && q.wanted.length > 0; pass++) {
        const asks = new Map(q.wanted.map((w) => [`${w.index}:${w.number}`, w]));
        await Promise.all([...asks.values()].slice(0, HASH_READS).map((w) => this.readHash(this.members[w.index], w.number)));
        q = quorumHead(chains, believed, rule, wasForked);
      }
      if (q.head !== undefined) {
        agreed = q.head;
        this.members.forEach((m, i) => {
          if (chains[i]) m.forked = q.forked[i];
        });
        const on = this.members.find((m, i) => chains[i] && !q.forked[i] && hashOf(m, q.head!) !== undefined);
        const hash = on && hashOf(on, q.head);
        if (hash !== undefined) this.agreedBlock = { number: q.head, hash };
      }
    }
    // Each head as read this round, also lower than before (a node that lost blocks), unless an answer raised it
    // since: the round waits for its slowest node (a second for a stalled one), and its read, put back, left the
    // only healthy node 170 blocks behind its own answers on a fast chain; two such rounds in a row were taken as
    // the chain going back.
    this.members.forEach((m, i) => {
      const read = latest[i];
      if (read) m.head = m.head === read.headThen || m.head === undefined ? read.number : Math.max(m.head, read.number);
    });
    return agreed;
  }

  /** This round's findings, for the instances that do not check (cluster mode). */
  private reportOf(agreed: number | undefined): NodesReport {
    const members: NodesReport['members'] = {};
    for (const m of this.members) members[m.label] = { head: m.head, chainId: m.chainId, refused: m.refused, forked: m.forked };
    return { agreed, safe: this.head.safe, finalized: this.head.finalized, members };
  }

  /**
   * The checking instance's findings, taken as this round's (cluster mode): what each node serves, whether it is on
   * another branch, its head (raised, never lowered: this instance's own answers may have shown more); its breaker
   * stays this instance's own, from its own calls. Returns the head the round agreed on.
   */
  private take(report: NodesReport): number | undefined {
    for (const m of this.members) {
      const r = report.members[m.label];
      if (!r) continue;
      m.refused = r.refused;
      // Refused by the checking instance: out here too; back once this instance's own probe confirms it.
      if (r.refused) m.unconfirmed = true;
      m.forked = r.forked;
      if (r.chainId !== undefined) m.chainId = r.chainId;
      if (r.head !== undefined && !r.refused && (m.head === undefined || r.head > m.head)) m.head = r.head;
    }
    if (report.safe !== undefined) this.head.settled('safe', report.safe);
    if (report.finalized !== undefined) this.head.settled('finalized', report.finalized);
    return report.agreed;
  }

  /** The hash of a member's block `n`, kept by the member (`agree`); a failure or no block leaves it unknown. */
  private async readHash(m: UpstreamMember, n: number): Promise<void> {
    try {
      const b = blockOf((await this.pool.probe(m, 'eth_getBlockByNumber', [hex(n), false], Math.max(1000, this.checkIntervalMs))).result);
      if (b && b.number === n) m.noteHash(n, b.hash);
    } catch {
      // Recorded by the pool; the next round asks again.
    }
  }

  private noteState(m: UpstreamMember, best: number | undefined): void {
    const s = this.statusOf(m, best);
    const was = this.states.get(m);
    this.states.set(m, s.state);
    if (was === undefined || was === s.state) return;
    this.emit('upstream', s);
    const line = { upstream: s.upstream, from: was, to: s.state, head: s.head, lag: s.lag, error: s.error };
    if (s.state === 'up') this.log.info(line, 'upstream state changed');
    else this.log.warn(line, 'upstream state changed');
  }

  private statusOf(m: UpstreamMember, best: number | undefined): UpstreamStatus {
    const breaker = m.breaker();
    const state = m.refused ? 'refused' : !m.reachable ? (m.lastError ? 'down' : 'unknown') : m.unconfirmed ? 'unknown'
      : m.forked ? 'forked' : m.suspect(best) ? 'suspect' : m.lagging(this.lagFrom(), this.policy) ? 'lagging' : 'up';
    const error = state === 'suspect' ? `head ${m.head} is far ahead of the agreed head ${best}; held back until other nodes confirm it`
      : state === 'forked' ? `its blocks are not those a quorum of nodes has (another branch); no calls until it agrees again`
      : state === 'unknown' && m.reachable ? 'its chain id is being read again; no calls until it is' : m.lastError;
    const socket = m.upstream.socketState?.();
    const lacks = m.gapList(Date.now());
    const head = this.head.number ?? best;
    const held = m.holding;
    const holds = held.state || held.history
      ? { ...(held.state ? { state: shownHolding(held.state, head) } : {}), ...(held.history ? { history: shownHolding(held.history, head) } : {}) }
      : undefined;
    return {
      network: this.network, upstream: m.label, role: m.config.role, state, chainId: m.chainId, head: m.head,
      lag: m.lag(best), breaker, ...(socket ? { socket } : {}), ...(m.logsRange !== undefined ? { getLogsRange: m.logsRange } : {}),
      ...(m.logsResults !== undefined ? { getLogsResults: m.logsResults } : {}),
      ...(lacks ? { lacks } : {}), ...(holds ? { holds } : {}), ...(m.verifyFailures ? { verifyFailures: { ...m.verifyFailures } } : {}), ...(error ? { error } : {}),
    };
  }

  /** Every upstream's state now, for `/readyz` and the banner. */
  status(): UpstreamStatus[] {
    const best = this.best();
    return this.members.map((m) => this.statusOf(m, best));
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
   * leave out a block mined in between (the first log after a subscription went missing).
   */
  async followFromNow(): Promise<void> {
    this.pushes.start();
    if (this.window.tip !== undefined) return;
    const b = await this.latestBlock(BLOCK_READ_MS);
    if (this.window.tip === undefined) this.window.seed(b);
  }

  /** The head's block number, read from the upstreams first if it is not known yet. */
  async headNumber(): Promise<number | undefined> {
    if (this.head.number === undefined) await this.check();
    return this.head.number;
  }

  /**
   * The latest block: the upstreams' latest, or, if a caller was already shown a newer block (a receipt read a
   * moment before the node counts its block, or another upstream), that block, once an upstream has it. So a
   * filter polled right after a receipt reports that receipt's logs (read-your-writes).
   */
  async latestBlock(timeoutMs: number): Promise<BlockRef> {
    const end = Date.now() + CATCH_UP_MS;
    for (;;) {
      const latest = await this.blockAt('latest', timeoutMs);
      if (!latest) throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: 'the node has no latest block' });
      const known = this.head.number;
      if (known === undefined || latest.number >= known) {
        if (this.head.believable(latest.number)) this.head.advance(latest.number);
        return latest;
      }
      const seen = await this.blockAt(hex(known), timeoutMs);
      if (seen) return seen;
      if (Date.now() >= end) return latest; // the block a caller saw is gone (the chain went back): the node's head
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * A block's number, hash and parent by number or tag, or undefined if the upstreams do not have it. The block is
   * offered to the chain window (the next block after its tip is taken at once).
   */
  async blockAt(tag: string, timeoutMs: number): Promise<BlockRef | undefined> {
    const b = await this.read(tag, timeoutMs);
    if (b) this.window.offer(b);
    return b;
  }

  /**
   * Block `n` for the chain window, from a node on the agreed chain: one that answers, is not forked and has the
   * agreed block's hash, the same one while it stays so. Routed as any read, a node not yet known to be on another
   * branch could answer, and a network whose nodes disagree at every height (three anvils stamping other
   * timestamps) had its window see a reorganisation at almost every read: newHeads told numbers again and out of
   * order. No block agreed yet: one node that answers, kept while it does. None such, one node or a quorum of 1:
   * read as any call.
   */
  private async readFollowed(n: number): Promise<BlockRef | undefined> {
    if (!this.byQuorum()) return this.read(hex(n), BLOCK_READ_MS);
    const at = this.agreedBlock;
    const now = Date.now();
    // No block agreed yet: one node that answers, the same while it does.
    const onChain = (m: UpstreamMember) => !m.refused && !m.forked && m.breaker(now) !== 'open' && (at === undefined || hashOf(m, at.number) === at.hash);
    // Kept while it is on the agreed chain and has the block (a node that stalls does not stall the window).
    const has = (m: UpstreamMember) => (m.head ?? -1) >= n;
    if (!this.windowNode || !onChain(this.windowNode) || (!has(this.windowNode) && this.members.some((m) => onChain(m) && has(m)))) {
      this.windowNode = this.members.filter(onChain).sort((a, b) => (b.head ?? -1) - (a.head ?? -1))[0];
    }
    if (!this.windowNode) return this.read(hex(n), BLOCK_READ_MS);
    const a = await this.pool.via(this.windowNode, 'eth_getBlockByNumber', [hex(n), false], BLOCK_READ_MS);
    if (a.error) throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: `the node refused eth_getBlockByNumber: ${String(a.error.message).slice(0, 200)}` });
    // The agreed chain's block: its header serves the verifier's checks of answers at this height (no read of its own).
    this.pool.verifier?.offer(a.result);
    return blockOf(a.result);
  }

  /** As `blockAt`, without offering the block to the window (the window's own reads). */
  private async read(tag: string, timeoutMs: number): Promise<BlockRef | undefined> {
    const a = await this.call('eth_getBlockByNumber', [tag, false], timeoutMs, { background: true });
    if (a.error) throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: `the node refused eth_getBlockByNumber: ${String(a.error.message).slice(0, 200)}` });
    return blockOf(a.result);
  }
}

/** A member's hash of block `n`, as its checks read it (its latest block, or one it was asked for). */
function hashOf(m: UpstreamMember, n: number): string | undefined {
  return m.block?.number === n ? m.block.hash : m.hashes.get(n);
}
