/**
 * How far a head may run ahead of what the chain module already holds before it is believed (issue 17: one node
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
   * back (chain.ts): proof that a far jump is real, taken only when no other healthy node disagrees.
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
 * Without a bound (an embedded chain: Nodegate's own anvil), every claim is believed. Issue 19's quorum replaces
 * the rule here, and only here.
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
