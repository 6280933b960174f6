import type { Adapter } from './adapters/adapter.ts';
import type { MethodSchema } from './schemas/method-schema.ts';

/**
 * Where a method names its block, and in which form. The validation's `latest` default, the pinning of tags to the
 * agreed head and the cache's block-derived policies all read this one field.
 * - `number`: a number, a tag or an EIP-1898 object; `optional`: it may be left out, and then means `latest`.
 * - `hash`: a block hash only.
 * - `numberOrHash`: geth's BlockNumberOrHash, which also takes a bare block hash (eth_getBlockReceipts).
 * - `filter`: a log filter object (`fromBlock`/`toBlock`, or `blockHash`) at index 0.
 */
export type BlockParam =
  | { readonly index: number; readonly by: 'number'; readonly optional: boolean }
  | { readonly index: number; readonly by: 'hash' | 'numberOrHash' }
  | { readonly index: 0; readonly by: 'filter' };

/**
 * How long an answer may be reused (the cache module gives each its meaning, src/cache/cache-policy.ts):
 * `forever`, `head` (until the head moves), `never`; `block`: as its block parameter says (a hash or a final
 * number: forever; a tag or a recent number: until the head moves; `pending`: never); `txHash`: as the block the
 * answer names (pending or unknown: never); `traceTx`: until the head moves.
 */
export type CacheRule = 'forever' | 'head' | 'never' | 'block' | 'txHash' | 'traceTx';

/**
 * What a successful answer shows of the chain (read-your-writes: the head is at least that block;
 * src/chain/block-seen.ts): `none`; `quantity`: the result is a block number; `blockNumber`: the result's
 * `blockNumber` (a mined transaction or receipt); `block`: the result's `number` (a block; not the pending one);
 * `items`: the newest `blockNumber` among the result's items (logs, receipts).
 */
export type SeenRule = 'none' | 'quantity' | 'blockNumber' | 'block' | 'items';

/**
 * Which upstream of a network takes the call (src/chain/upstream-pool.ts): `any` usable one (reads, retried
 * elsewhere on a transport failure), the `designated` one (state that lives in one node: its accounts and keys),
 * or `broadcast` to every usable primary (a signed transaction; the first acceptance wins).
 */
export type Routing = 'any' | 'designated' | 'broadcast';

/** Everything the gateway knows of one method: the one place a method is described. */
export interface MethodSpec {
  readonly name: string;
  /** Parameter schemas (checked before any node is asked) and the result's schema (the tests check shapes). */
  readonly schema: MethodSchema;
  /** Its block parameter, if it names a block. */
  readonly block: BlockParam | undefined;
  /** Compute units one call costs (docs/decisions.md §7); `limits.costs` overrides it. */
  readonly cost: number;
  readonly cache: CacheRule;
  readonly seen: SeenRule;
  readonly route: Routing;
  /** Sends a transaction: the head is about to move, and its hash is noted for pending-transaction filters. */
  readonly write: boolean;
  /** Executes a call object on the node: `rpc.gasCap` bounds the gas it may burn (src/methods/gas-cap.ts). */
  readonly gasCapped: boolean;
  /**
   * The node may need long for it (per-method time-outs): it scans many blocks or receipts
   * (eth_getLogs, eth_getBlockReceipts). Such calls, and the ones that execute code (`gasCapped`), get
   * `rpc.heavyTimeoutMs`; `debug_*` get `rpc.debugTimeoutMs`; every other call the short `rpc.timeoutMs`.
   */
  readonly heavy?: true;
  /** Closes a gap between a node and geth's documented behaviour (src/methods/adapters/). */
  readonly adapter: Adapter | undefined;
  /** Answered by the gateway itself (the filter methods, docs/decisions.md §8); the handler is the filters module's. */
  readonly local: boolean;
  /**
   * Not on the allowed list: enabled only through `rpc.extraMethods`, and by default on embedded chains when
   * `embedded` (their anvil answers it).
   */
  readonly extra?: { readonly embedded: boolean };
  /**
   * A subscription method (eth_subscribe, eth_unsubscribe): in every network's table, answered by the gateway over
   * a WebSocket; over HTTP, -32601 "notifications not supported".
   */
  readonly socket?: true;
}

/** The fields most specs share: a read any node may answer, no adapter, nothing shown, not cached. */
export const READ = { block: undefined, cache: 'never', seen: 'none', route: 'any', write: false, gasCapped: false, adapter: undefined, local: false } as const;
