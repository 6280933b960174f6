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
 * Where a method's params name the contracts it calls or reads (a key's contract allowlist holds its calls to them,
 * src/methods/contracts-named.ts): `call`, a call or transaction object's `to` (none: it creates a contract); `raw`,
 * a signed transaction's `to`; `filter`, a log filter's `address`, one or a list (none: every contract). `when`: only
 * when the param at that index is that value (eth_subscribe names contracts for `logs` only).
 */
export interface ContractParam {
  readonly index: number;
  readonly in: 'call' | 'raw' | 'filter';
  readonly when?: { readonly index: number; readonly is: string };
}

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

/**
 * What a node must still hold to answer a call at an older block (pruned nodes, EIP-4444 history expiry): `state`
 * (balances, code, storage, calls and traces at that block: a full node keeps the last 128 blocks' state) or
 * `history` (the block, its transactions, receipts and logs). A call at block N goes only to nodes that hold N
 * (src/chain/holdings.ts); its `block` parameter says where N is.
 */
export type Holds = 'state' | 'history';

/**
 * What a successful answer is checked for before it is passed on (per network `verify`, src/chain/verify/):
 * `block` (a block: its number and hash as asked, its hash that of its header, the agreed chain's), `logs` (in
 * order, in the asked range and filter, in their block's logsBloom), `receipt` and `receipts` (of the asked
 * transaction or block, in that block; at `full`, a block's receipts against its receiptsRoot), `transaction` (the
 * asked one, in the block it names).
 */
export type VerifyRule = 'block' | 'logs' | 'receipt' | 'receipts' | 'transaction';

/**
 * What a spec file declares of one method (src/methods/specs/). The gateway reads the fuller `MethodSpec`, which
 * adds the facts drawn from these fields once, at start-up (src/methods/specs.ts).
 */
export interface DeclaredSpec {
  readonly name: string;
  /** Parameter schemas (checked before any node is asked) and the result's schema (the tests check shapes). */
  readonly schema: MethodSchema;
  /** Its block parameter, if it names a block. */
  readonly block: BlockParam | undefined;
  /** What a node must hold at the call's block to answer it (pruned nodes); absent: any node that has the block. */
  readonly holds?: Holds;
  /** What its answer is checked for (networks with `verify` on); absent: nothing. */
  readonly verify?: VerifyRule;
  /** Compute units one call costs (docs/decisions.md §7); `limits.costs` overrides it. */
  readonly cost: number;
  readonly cache: CacheRule;
  readonly seen: SeenRule;
  readonly route: Routing;
  /**
   * Sends a transaction: the head is about to move, and its hash is noted for pending-transaction filters.
   * `raw`: a signed transaction (eth_sendRawTransaction); `signed`: one the node signs with its own key
   * (eth_sendTransaction). An embedded chain journals either before anvil sees it.
   */
  readonly write: false | 'raw' | 'signed';
  /** Executes a call object on the node: `rpc.gasCap` bounds the gas it may burn (src/methods/gas-cap.ts). */
  readonly gasCapped: boolean;
  /**
   * A trace (`debug_*`): plans may exclude it; it gets `rpc.debugTimeoutMs`; its time is the caller's work, not the
   * node's pace (no hedge, not in the hedge delay's sample), and it shares a node request only with other traces.
   */
  readonly trace: boolean;
  /**
   * The node may need long for it (per-method time-outs): it scans many blocks or receipts
   * (eth_getLogs, eth_getBlockReceipts). Such calls, and the ones that execute code (`gasCapped`), get
   * `rpc.heavyTimeoutMs`; traces get `rpc.debugTimeoutMs`; every other call the short `rpc.timeoutMs`.
   */
  readonly heavy?: true;
  /**
   * Its block range (a log filter's `fromBlock`..`toBlock`) may be asked as several node calls, each over a part
   * of it, to fit upstreams' range bounds (src/chain/logs-split.ts); each part is charged as the call it is.
   */
  readonly splitsRange?: true;
  /**
   * Quick for the node but large: it reads much history or the whole pool (eth_feeHistory: up to 1,024 blocks;
   * eth_pendingTransactions: the whole pool). Short time-out, but not a light read.
   */
  readonly scans?: true;
  /**
   * The index of its "full transactions" flag (eth_getBlockBy*): with it true the answer may be megabytes, so the
   * call is not a light read.
   */
  readonly fullTransactions?: number;
  /**
   * An answer without a `blockNumber` (a transaction still pending) may only mean the node has not seen its block
   * yet (eth_getTransactionByHash on a node behind the one that mined it): asked again of a node ahead.
   */
  readonly pendingMayBeLag?: true;
  /** Allowed though not among the spec's methods (eth_chainId): `rpc.strictMethods` drops it (docs/decisions.md §4). */
  readonly beyondSpec?: true;
  /**
   * The index of a log filter whose block range a key's own eth_getLogs range bounds (eth_getLogs, and eth_newFilter,
   * whose range eth_getFilterLogs reads later); absent: none.
   */
  readonly logRange?: number;
  /** Where its params name contracts, for keys with a contract allowlist; absent: it names none. */
  readonly contracts?: ContractParam;
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

/**
 * Everything the gateway knows of one method: the one place a method is described. Its declaration, and the facts
 * the chain module's routing reads, drawn from it once (src/methods/specs.ts `describe`), so that no module
 * outside src/methods decides anything by a method's name.
 */
export interface MethodSpec extends DeclaredSpec {
  /**
   * A light read: a node answers it in microseconds from its state (balances, nonces, code, storage, the head, a
   * block or transaction by its id), so it may share one node request with other callers' (upstream/upstream.ts
   * `light`). Not: calls that execute code or scan blocks (`heavy`, `gasCapped`, `scans`), traces, writes, what
   * only one node holds, what the gateway answers. A block with its full transactions is not light either
   * (`fullTransactions`): up to megabytes each, a hundred of them in one batch would pass rpc.maxAnswerBytes.
   */
  readonly light: boolean;
  /**
   * Runs code on the node (eth_call, eth_estimateGas; not traces): over the node's WebSocket when it has one
   * (upstream/upstream.ts `socket`), never shared.
   */
  readonly overSocket: boolean;
  /**
   * Its `null` may only mean the node has not seen it yet (a lookup by transaction or block hash): from a node
   * behind another, not an answer to pass on.
   */
  readonly nullMayBeLag: boolean;
}

/**
 * What the chain module reads of a call's method (routing, sharing, time-outs): its spec but for how it is
 * answered (the adapter and the local handler, which the method table wraps and fills in per network).
 */
export type MethodFacts = Omit<MethodSpec, 'adapter' | 'local'>;

/** A call object's `to` at index 0 (eth_call, eth_estimateGas, debug_traceCall, eth_sendTransaction). */
export const CALL: ContractParam = { index: 0, in: 'call' };
/** A log filter's `address` at index 0 (eth_getLogs, eth_newFilter). */
export const FILTER: ContractParam = { index: 0, in: 'filter' };

/** The fields most specs share: a read any node may answer, no adapter, nothing shown, not cached. */
export const READ = {
  block: undefined, cache: 'never', seen: 'none', route: 'any', write: false, gasCapped: false, trace: false, adapter: undefined, local: false,
} as const;
