import type { Holds } from '../methods/method-spec.ts';
import type { CallSignal } from '../errors/on-abort.ts';

/** How a call is to be routed, decided by the chain module (and the request's stages) before it reaches the pool. */
export interface Route {
  /** The caller's key is Dedicated: its calls go to the network's dedicated upstreams when it has any. */
  dedicated?: boolean;
  /** The call names this block (a pinned `latest`): only upstreams that have it may answer. */
  minBlock?: number;
  /**
   * What the node must hold at the call's oldest block (its spec's `holds`), and that block (`oldest`; absent:
   * `minBlock`): only nodes that hold it are asked (holdings.ts).
   */
  needs?: Holds;
  oldest?: number;
  /** The call's deadline (rpc/deadline.ts): once it aborts, the node request is aborted and no other node is asked. */
  signal?: CallSignal;
  /**
   * A piece of a split eth_getLogs (logs-split.ts): the blocks it spans. Upstreams known to take that range come
   * first within a role.
   */
  span?: number;
  /**
   * The call is asked as `pieces` more node calls than one (a split eth_getLogs), each costing `units` (its method's
   * declared cost): charged before they go, as the calls they are (the request stages'; absent: not charged). Throws
   * or rejects when the caller's plan cannot pay.
   */
  charge?: (pieces: number, units: number) => void | Promise<unknown>;
  /** The chain module's own read (its window, its head): counted as background, not as a client's (metrics). */
  background?: boolean;
  /**
   * Where the pool writes the label of the upstream whose answer the call gets (the request explorer's "node"); left
   * as it was when no single upstream answered (a broadcast, a split eth_getLogs).
   */
  answered?: { node?: string };
}
