import { agreedHead, quorumHead, type HeadBound, type HeadClaim } from './agreed-head.ts';
import { blockOf } from './block-of.ts';
import type { ChainHead } from './chain-head.ts';
import type { ChainWindow } from './chain-window.ts';
import type { HealthPolicy, UpstreamMember } from './upstream-member.ts';
import type { UpstreamPool } from './upstream-pool.ts';

const hex = (n: number) => `0x${n.toString(16)}`;
/** Block hashes read per pass of `agree` at most (two passes a round), to compare nodes at different heights. */
const HASH_READS = 4;

/** A member's latest block as a round's check read it, and its head (as answers raised it) at that moment. */
export interface CheckedBlock {
  number: number;
  hash: string;
  headThen: number | undefined;
}

/**
 * What the nodes' heads say together: the best believed head (what lag is measured from), and on networks of
 * several nodes the block a quorum of them agrees on (agreed-head.ts), from a round's reads (`agree`) or from a
 * node's push (`afterPush`). The network's head (chain-head.ts) follows what this finds; the chain module decides
 * when.
 */
export class NodeHeads {
  /** The last block a quorum agreed on, with its hash (networks of several nodes): the chain the window follows. */
  agreedBlock: { number: number; hash: string } | undefined;

  constructor(
    private readonly members: readonly UpstreamMember[],
    private readonly policy: HealthPolicy,
    private readonly head: ChainHead,
    private readonly pool: UpstreamPool,
    private readonly checkIntervalMs: number,
    /** How far one node's head is believed ahead of the others (agreed-head.ts); undefined: an embedded chain. */
    private readonly headBound: HeadBound | undefined,
  ) {}

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
   * answering (their breaker is open; with only a node 3 blocks behind left, `eth_blockNumber` would go back
   * from 44 to 41 and filters would report logs removed that no reorganisation removed), or a node that answers is
   * ahead of the quorum (an answer of it showed a newer block: read-your-writes). Only when no such node has the
   * shown block any more is a lower head the chain going back (`ChainHead.observe`).
   */
  shownStillHeld(head: number): boolean {
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
  byQuorum(): boolean {
    return this.members.length > 1 && (this.policy.quorum ?? 1) !== 1;
  }

  /** Each member's head, if it answers, serves this chain and is not on another branch. */
  claims(now: number): Array<HeadClaim | undefined> {
    return this.members.map((m) => (m.unconfirmed || m.forked || m.head === undefined || m.breaker(now) === 'open' ? undefined : { head: m.head, served: m.served }));
  }

  /**
   * Networks of several nodes: the heads read this round are compared before any is taken (so no call goes to a
   * node on another branch in between), the agreed head is the highest block a quorum of them has with the same
   * hash (agreed-head.ts `quorumHead`), and a node whose block at a height the quorum agrees on has another hash is
   * `forked`. Hashes not known yet are read, a few per round (`HASH_READS`, twice at most), each kept by its member.
   * No agreement: the forked marks and the head stay as they were (undefined is returned).
   */
  async agree(latest: ReadonlyArray<CheckedBlock | undefined>): Promise<number | undefined> {
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
    // since: the round waits for its slowest node (a second for a stalled one), and its read, put back, can leave
    // the only healthy node 170 blocks behind its own answers on a fast chain; two such rounds in a row would be
    // taken as the chain going back.
    this.members.forEach((m, i) => {
      const read = latest[i];
      if (read) m.head = m.head === read.headThen || m.head === undefined ? read.number : Math.max(m.head, read.number);
    });
    return agreed;
  }

  /**
   * The head agreed again from every node's latest block after a node pushed a new head, as a round agrees it (the
   * quorum's block with several nodes, the highest believed head otherwise), without reading anything. Returned
   * when it moves the network's head on, or (by quorum) when `window` holds another block at its height (the tip
   * replaced: to be followed to recognise the reorganisation); undefined: nothing to take.
   */
  afterPush(window: ChainWindow): number | undefined {
    const now = Date.now();
    if (!this.byQuorum()) {
      const head = this.best(now);
      return head === undefined || (this.head.number !== undefined && head <= this.head.number) ? undefined : head;
    }
    const claims = this.members.map((x) => (x.unconfirmed || x.block === undefined || x.breaker(now) === 'open' ? undefined : { head: x.block.number, served: x.served }));
    const { believed } = agreedHead(claims, { head: this.head.number, at: this.head.movedAt }, now, this.headBound);
    const chains = this.members.map((x, i) => (claims[i] ? { block: x.block!, hashes: x.hashes } : undefined));
    const q = quorumHead(chains, believed, { size: this.policy.quorum ?? 1, maxLag: this.policy.maxLagBlocks }, this.members.map((x) => x.forked));
    const on = q.head === undefined ? undefined : this.members.find((x, i) => chains[i] && !q.forked[i] && hashOf(x, q.head!) !== undefined);
    if (q.head === undefined || on === undefined) return undefined;
    const head = q.head;
    const hash = hashOf(on, head)!;
    const moved = this.head.number === undefined || head > this.head.number;
    const other = window.at(head) !== undefined && window.at(head)!.hash !== hash;
    if (!moved && !other) return undefined;
    this.agreedBlock = { number: head, hash };
    return head;
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
}

/** A member's hash of block `n`, as its checks read it (its latest block, or one it was asked for). */
export function hashOf(m: UpstreamMember, n: number): string | undefined {
  return m.block?.number === n ? m.block.hash : m.hashes.get(n);
}
