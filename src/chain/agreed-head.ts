/**
 * How far a head may run ahead of what the chain module already holds before it is believed (one node
 * claiming block 10^12 took its network over). Generous for every real chain: the fastest EVM chains make a few
 * blocks a second, and nodes of one network are a few blocks apart.
 */
export interface HeadBound {
  /** Blocks a head may be above the highest head another healthy node reports, or above the agreed head. */
  slackBlocks: number;
  /** Blocks per second since the agreed head last moved that are believable on top of it. */
  blocksPerSecond: number;
}

export const HEAD_BOUND: HeadBound = { slackBlocks: 64, blocksPerSecond: 50 };

/** One member's report, as the chain module last read it. */
export interface HeadClaim {
  head: number;
  /**
   * The highest block this node has served when asked for it by number, after keeping to a claim that was held
   * back (check-round.ts): proof that a far jump is real, taken only when no other healthy node disagrees.
   */
  served?: number;
}

/** The agreed head so far and when it last moved (ms). */
export interface LastHead {
  head: number | undefined;
  at: number;
}

export interface Agreed {
  /** The highest believed head; the last agreed head when no claim is believed; undefined before any. */
  head: number | undefined;
  /** Per claim (same order): believed, or held back as suspect; false for a missing claim. */
  believed: boolean[];
}

/** The most a head may be believed at now, from the agreed head alone (none known: anything). */
export function believableUpTo(last: LastHead, now: number, bound: HeadBound): number {
  if (last.head === undefined) return Infinity;
  return last.head + bound.slackBlocks + Math.floor((Math.max(0, now - last.at) / 1000) * bound.blocksPerSecond);
}

/**
 * The network's agreed head from its healthy members' claims (`undefined`: a member not healthy or not read yet).
 * A claim is believed when it is within `slackBlocks` of what another healthy node reports, or within what time
 * allows since the agreed head last moved (`believableUpTo`), or when it is the only claim and the node served that
 * block. The agreed head never jumps to what one node alone claims while others disagree; a network of one node
 * (or at start, with nothing known yet) believes its node, except for a jump beyond what time allows.
 * Without a bound (an embedded chain: Nodegate's own anvil), every claim is believed. The head is the highest
 * believed one: with several nodes, what lag is measured from; the network's head is then `quorumHead`'s block.
 */
export function agreedHead(claims: ReadonlyArray<HeadClaim | undefined>, last: LastHead, now: number, bound: HeadBound | undefined): Agreed {
  const byTime = bound === undefined ? Infinity : believableUpTo(last, now, bound);
  const believed = claims.map((c, i) => {
    if (c === undefined) return false;
    if (bound === undefined || (last.head !== undefined && c.head <= byTime)) return true;
    let others: number | undefined;
    for (let j = 0; j < claims.length; j++) {
      const o = claims[j];
      if (j !== i && o !== undefined && (others === undefined || o.head > others)) others = o.head;
    }
    if (others !== undefined) return c.head <= others + bound.slackBlocks;
    // Alone: with nothing known yet there is nothing to hold it against; else only a block it served.
    return last.head === undefined || (c.served !== undefined && c.head <= c.served + bound.slackBlocks);
  });
  let head: number | undefined;
  for (let i = 0; i < claims.length; i++) {
    const h = claims[i]?.head;
    if (believed[i] && h !== undefined && (head === undefined || h > head)) head = h;
  }
  return { head: head ?? last.head, believed };
}

/** How many healthy nodes must have a block with the same hash (config `upstreams.quorum`), and the lag bound. */
export interface QuorumRule {
  /** Nodes; 0: a majority of those counted (floor(n/2)+1 of n). Either is capped at n, so one node when there is one. */
  size: number;
  /** `maxLagBlocks`: a node further behind the highest believed head is lagging (see `quorumHead`). */
  maxLag: number;
}

/** A member's latest block as the last check read it, and the hashes of other blocks it was asked for. */
export interface ChainClaim {
  block: { number: number; hash: string } | undefined;
  hashes: ReadonlyMap<number, string>;
}

export interface Quorum {
  /** The highest block a quorum of healthy nodes has with the same hash; undefined when they agree on none. */
  head: number | undefined;
  /** Per member: its block at a height the quorum agrees on has another hash (it is on another branch). */
  forked: boolean[];
  /** Hashes that would decide more (a member above a candidate block whose hash there is unknown), highest first. */
  wanted: Array<{ index: number; number: number }>;
}

/** Blocks below the highest head a quorum is looked for; further down, the nodes are taken as agreeing on none. */
const QUORUM_WINDOW = 64;

/** The quorum among `n` counted nodes: `size` capped at n, or a majority of them (size 0). */
export function quorumOf(size: number, n: number): number {
  return size === 0 ? Math.floor(n / 2) + 1 : Math.min(size, n);
}

/**
 * The network's agreed head with a quorum (as proxyd's "highest common block"): the highest block that at
 * least `q` of the healthy, believed members (`believed` from `agreedHead`; a member without a read `block` is
 * not counted) have with the same hash, q = min(rule.size, their number) or a majority of them (size 0: floor(n/2)+1),
 * so one node when there is one. A member
 * whose block at that height has another hash is `forked`. Nodes more than `maxLag` behind the highest head are
 * lagging and left out of the count, unless they are `q` or more themselves: then a node far ahead of a quorum is
 * more likely one that mined blocks alone than the quorum stalled, and the quorum holds. When no `q` nodes are on
 * one chain at all (two left, on branches of their own), the highest is followed. A hash not known yet (a
 * member above a candidate, asked only for its latest block) is `wanted`: the chain module reads it and decides
 * again. Forks are told only with q of 2 or more.
 *
 * A member already `forked` (`wasForked`, the last round's marks) does not count towards the quorum: it is compared
 * with the block the others agree on and is back when it has that block's hash, but it never makes a quorum, nor
 * sets the head once the quorum is lost (with one of the two that agreed killed, the two left were each on
 * a branch of their own, and the highest, the forked node's, was followed). It stays forked while its hash at the
 * agreed block is not known. When only forked members are left, no block is agreed (the head holds).
 */
export function quorumHead(claims: ReadonlyArray<ChainClaim | undefined>, believed: readonly boolean[], rule: QuorumRule, wasForked: readonly boolean[] = []): Quorum {
  const forked = claims.map(() => false);
  const wanted: Quorum['wanted'] = [];
  const tip = (i: number) => claims[i]!.block!.number;
  const hashAt = (i: number, n: number): string | undefined => {
    const c = claims[i]!;
    return c.block!.number === n ? c.block!.hash : c.hashes.get(n);
  };
  const answering = claims.flatMap((c, i) => (c?.block !== undefined && believed[i] ? [i] : []));
  const healthy = answering.filter((i) => !wasForked[i]);
  if (healthy.length === 0) return { head: undefined, forked: claims.map((_, i) => wasForked[i] === true), wanted };
  const search = (group: number[], q: number): { n: number; hash: string } | undefined => {
    const top = Math.max(...group.map(tip));
    const candidates = new Set<number>();
    for (const i of group) {
      candidates.add(tip(i));
      for (const n of claims[i]!.hashes.keys()) if (n <= tip(i)) candidates.add(n);
    }
    for (const n of [...candidates].filter((x) => x >= top - QUORUM_WINDOW).sort((a, b) => b - a)) {
      const count = new Map<string, number>();
      for (const i of group) {
        if (tip(i) < n) continue;
        const h = hashAt(i, n);
        if (h === undefined) wanted.push({ index: i, number: n });
        else count.set(h, (count.get(h) ?? 0) + 1);
      }
      const agreeing = [...count].filter(([, k]) => k >= q);
      if (agreeing.length === 1) return { n, hash: agreeing[0][0] };
    }
    return undefined;
  };
  let group = healthy;
  let q = quorumOf(rule.size, group.length);
  // Nodes on one chain: the lower one's latest block is the higher one's block at that height (not known yet:
  // taken as so, and wanted). When no q of them are on one chain (two nodes left, each on a branch of its own),
  // no quorum can be had: the highest is followed, as with one node, and nothing is marked forked.
  const oneChain = (i: number, j: number): boolean => {
    const [lo, hi] = tip(i) <= tip(j) ? [i, j] : [j, i];
    const h = hashAt(hi, tip(lo));
    if (h === undefined) wanted.push({ index: hi, number: tip(lo) });
    return h === undefined || h === hashAt(lo, tip(lo));
  };
  if (q > 1 && Math.max(...healthy.map((i) => healthy.filter((j) => j === i || oneChain(i, j)).length)) < q) q = 1;
  let found = search(group, q);
  const top = Math.max(...healthy.map(tip));
  const lagging = healthy.filter((i) => tip(i) < top - rule.maxLag);
  if (q > 1 && (found === undefined || found.n < top - rule.maxLag) && lagging.length > 0 && lagging.length < q) {
    // Lagging nodes too few to be a quorum themselves: a stalled node, left out (it must not stall the network).
    group = healthy.filter((i) => !lagging.includes(i));
    q = quorumOf(rule.size, group.length);
    found = search(group, q);
  }
  const unique = () => {
    const asked = new Set<string>();
    return wanted.filter((w) => !asked.has(`${w.index}:${w.number}`) && asked.add(`${w.index}:${w.number}`));
  };
  if (found === undefined) return { head: undefined, forked: claims.map((_, i) => wasForked[i] === true), wanted: unique() };
  const supporters = group.filter((i) => tip(i) >= found.n && hashAt(i, found.n) === found.hash);
  // With q of 2 or more every answering member is compared; with 1, only those already forked (nothing tells
  // which of two nodes on branches of their own is right, but one the quorum left stays out until it agrees).
  for (const i of q < 2 ? answering.filter((k) => wasForked[k]) : answering) {
    if (tip(i) >= found.n) {
      const h = hashAt(i, found.n);
      if (h === undefined && wasForked[i]) wanted.push({ index: i, number: found.n });
      forked[i] = h === undefined ? wasForked[i] === true : h !== found.hash;
      continue;
    }
    // Below the agreed block: on another branch if a node of the quorum has another hash at its latest block.
    const theirs = supporters.map((s) => hashAt(s, tip(i))).find((h) => h !== undefined);
    forked[i] = theirs === undefined ? wasForked[i] === true : theirs !== hashAt(i, tip(i));
  }
  return { head: found.n, forked, wanted: unique() };
}
