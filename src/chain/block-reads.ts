import { GatewayError } from '../errors/gateway-error.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import { blockOf } from './block-of.ts';
import type { ChainHead } from './chain-head.ts';
import type { BlockRef, ChainWindow } from './chain-window.ts';
import { hashOf, type NodeHeads } from './node-heads.ts';
import type { Route } from './route.ts';
import type { UpstreamMember } from './upstream-member.ts';
import type { UpstreamPool } from './upstream-pool.ts';

const hex = (n: number) => `0x${n.toString(16)}`;
/** Time-out of the chain module's own block reads, ms. */
export const BLOCK_READ_MS = 10_000;
/** How long a poll for the latest block waits for the upstreams to have a block that the head says exists. */
const CATCH_UP_MS = 2_000;

/** A call routed as the chain module routes callers' calls (`Chain.call`: `latest` pinned to the head). */
export type ChainCall = (method: string, params: unknown[], timeoutMs: number, route: Route) => Promise<UpstreamAnswer>;

/**
 * The chain module's own reads of blocks (number, hash, parent): by tag or number as any call (`at`, `latest`), and
 * the blocks the chain window follows, from a node on the agreed chain (`followed`).
 */
export class BlockReads {
  /** The node the window last read from, kept while it is on the agreed chain (no hopping between nodes). */
  private windowNode: UpstreamMember | undefined;

  constructor(
    private readonly call: ChainCall,
    private readonly head: ChainHead,
    private readonly window: ChainWindow,
    private readonly pool: UpstreamPool,
    private readonly members: readonly UpstreamMember[],
    private readonly heads: NodeHeads,
  ) {}

  /**
   * The latest block: the upstreams' latest, or, if a caller was already shown a newer block (a receipt read a
   * moment before the node counts its block, or another upstream), that block, once an upstream has it. So a
   * filter polled right after a receipt reports that receipt's logs (read-your-writes).
   */
  async latest(timeoutMs: number): Promise<BlockRef> {
    const end = Date.now() + CATCH_UP_MS;
    for (;;) {
      const latest = await this.at('latest', timeoutMs);
      if (!latest) throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: 'the node has no latest block' });
      const known = this.head.number;
      if (known === undefined || latest.number >= known) {
        if (this.head.believable(latest.number)) this.head.advance(latest.number);
        return latest;
      }
      const seen = await this.at(hex(known), timeoutMs);
      if (seen) return seen;
      if (Date.now() >= end) return latest; // the block a caller saw is gone (the chain went back): the node's head
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * A block's number, hash and parent by number or tag, or undefined if the upstreams do not have it. The block is
   * offered to the chain window (the next block after its tip is taken at once).
   */
  async at(tag: string, timeoutMs: number): Promise<BlockRef | undefined> {
    const b = await this.read(tag, timeoutMs);
    if (b) this.window.offer(b);
    return b;
  }

  /** As `at`, without offering the block to the window (the window's own reads). */
  async read(tag: string, timeoutMs: number): Promise<BlockRef | undefined> {
    const a = await this.call('eth_getBlockByNumber', [tag, false], timeoutMs, { background: true });
    if (a.error) throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: `the node refused eth_getBlockByNumber: ${String(a.error.message).slice(0, 200)}` });
    return blockOf(a.result);
  }

  /**
   * Block `n` for the chain window, from a node on the agreed chain: one that answers, is not forked and has the
   * agreed block's hash, the same one while it stays so. Routed as any read, a node not yet known to be on another
   * branch could answer, and a network whose nodes disagree at every height (three anvils stamping other
   * timestamps) would have its window see a reorganisation at almost every read, and newHeads tell numbers again
   * and out of order. No block agreed yet: one node that answers, kept while it does. None such, one node or a
   * quorum of 1: read as any call.
   */
  async followed(n: number): Promise<BlockRef | undefined> {
    if (!this.heads.byQuorum()) return this.read(hex(n), BLOCK_READ_MS);
    const at = this.heads.agreedBlock;
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
}
