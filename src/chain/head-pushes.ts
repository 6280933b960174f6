import type { BlockRef } from './chain-window.ts';
import { blockOf } from './block-of.ts';
import type { UpstreamMember } from './upstream-member.ts';

/** Pushed headers kept, newest last: enough for the blocks between two heads a quorum agrees on. */
const KEPT_HEADERS = 32;

/** A header as a node pushed it, and the block it names. */
export interface PushedHead {
  block: BlockRef;
  header: Record<string, unknown>;
}

/**
 * The nodes' own pushes of new heads (Upstream.followHeads: their `eth_subscribe('newHeads')`), followed while the
 * network's blocks are (someone listens for the chain's `block`): each is handed to the chain module as it comes,
 * which agrees a head from them at once instead of at its next round of checks. Nothing is subscribed on the nodes
 * while nobody follows, so an idle network does no more than its checks. The headers are kept a little while by
 * hash, so that a block announced from a push is sent to subscribers without reading it again.
 */
export class HeadPushes {
  private stops: Array<() => void> | undefined;
  private readonly kept = new Map<string, PushedHead>();

  constructor(
    private readonly members: readonly UpstreamMember[],
    private readonly pushed: (m: UpstreamMember, head: PushedHead) => void,
  ) {}

  /** Subscribes on every node that has a socket to push on (once; again after `stop`). */
  start(): void {
    if (this.stops !== undefined) return;
    this.stops = [];
    for (const m of this.members) {
      const stop = m.upstream.followHeads?.((h) => this.take(m, h));
      if (stop) this.stops.push(stop);
    }
  }

  /** Unsubscribes on the nodes, and forgets the headers kept. */
  stop(): void {
    for (const stop of this.stops ?? []) stop();
    this.stops = undefined;
    this.kept.clear();
  }

  /** A block whose header a node pushed lately, by its hash. */
  byHash(hash: string): PushedHead | undefined {
    return this.kept.get(hash);
  }

  /** The newest pushed block at height `n`, whichever node pushed it. */
  at(n: number): PushedHead | undefined {
    let found: PushedHead | undefined;
    for (const p of this.kept.values()) if (p.block.number === n) found = p;
    return found;
  }

  private take(m: UpstreamMember, h: unknown): void {
    const block = blockOf(h);
    if (block === undefined) return;
    const known = this.kept.get(block.hash);
    const head = known ?? { block, header: h as Record<string, unknown> };
    if (known === undefined) {
      this.kept.set(block.hash, head);
      if (this.kept.size > KEPT_HEADERS) this.kept.delete(this.kept.keys().next().value!);
    }
    this.pushed(m, head);
  }
}
