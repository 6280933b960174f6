/**
 * How long an answer may be reused (docs/decisions.md §9): `forever` for answers that cannot change (by block hash, at a
 * block below the finality depth, pure functions), `head` until the network's head moves (anything tied to
 * `latest`), `never` for writes, signatures, filters and the pending block.
 */
export type CacheScope = 'never' | 'forever' | 'head';

/**
 * A method's policy. Called before the call without `result` (is a cached answer worth looking up?) and after it
 * with the result (how long may this answer live?). `final(n)`: block n is below the network's finality depth.
 */
export type CachePolicy = (params: unknown[], result: unknown, final: (n: number) => boolean) => CacheScope;

const always = (scope: CacheScope): CachePolicy => () => scope;

/** A block parameter (number, tag or EIP-1898 object) at `index`. */
const atBlock = (index: number): CachePolicy => (params, _result, final) => blockScope(params[index], final);

function blockScope(block: unknown, final: (n: number) => boolean): CacheScope {
  if (block === undefined || block === null) return 'head';
  if (typeof block === 'object') {
    const o = block as { blockHash?: unknown; blockNumber?: unknown };
    if (typeof o.blockHash === 'string') return 'forever';
    return blockScope(o.blockNumber, final);
  }
  if (typeof block !== 'string') return 'never';
  if (block === 'earliest') return 'forever';
  if (block === 'pending') return 'never';
  if (block.startsWith('0x')) return final(Number(block)) ? 'forever' : 'head';
  return 'head'; // latest, safe, finalized: they move with the head
}

/**
 * By block hash: a block never changes. A hash the node does not know (null) is not kept at all: the block may
 * arrive with the next head, which this gateway may learn of only after a caller has (read-your-writes).
 */
const byBlockHash: CachePolicy = (_params, result) => (result === null ? 'never' : 'forever');

/**
 * By transaction hash: the answer is fixed once its block is final; before that a reorganisation may move the
 * transaction (or drop it). A pending or unknown one (null, or no block yet) is not kept: a client polling for
 * its receipt must see it as soon as the node has it, not at the next head poll.
 */
const byTxHash: CachePolicy = (_params, result, final) => {
  if (result === undefined) return 'forever'; // before the call: worth a lookup
  const n = (result as { blockNumber?: unknown } | null)?.blockNumber;
  if (typeof n !== 'string') return 'never';
  return final(Number(n)) ? 'forever' : 'head';
};

/** A trace of a transaction: like the transaction, but the trace does not say its block, so until the head moves. */
const traceByTxHash: CachePolicy = always('head');

const logs: CachePolicy = (params, _result, final) => {
  const f = (params[0] ?? {}) as { blockHash?: unknown; fromBlock?: unknown; toBlock?: unknown };
  if (typeof f.blockHash === 'string') return 'forever';
  const to = blockScope(f.toBlock ?? 'latest', final);
  return to === 'forever' && blockScope(f.fromBlock ?? 'latest', final) !== 'never' ? 'forever' : to;
};

/** Methods absent from this table (writes, signatures, filters, accounts, the pending pool, extras) are never cached. */
export const CACHE_POLICIES: Readonly<Record<string, CachePolicy>> = {
  // Fixed for a network.
  eth_chainId: always('forever'),
  net_version: always('forever'),
  web3_sha3: always('forever'),
  // The node's view of now.
  eth_blockNumber: always('head'),
  eth_gasPrice: always('head'),
  eth_maxPriorityFeePerGas: always('head'),
  eth_syncing: always('head'),
  eth_mining: always('head'),
  eth_hashrate: always('head'),
  eth_coinbase: always('head'),
  eth_protocolVersion: always('head'),
  net_listening: always('head'),
  net_peerCount: always('head'),
  web3_clientVersion: always('head'),
  // State at a block.
  eth_getBalance: atBlock(1),
  eth_getCode: atBlock(1),
  eth_getTransactionCount: atBlock(1),
  eth_getStorageAt: atBlock(2),
  eth_call: atBlock(1),
  eth_estimateGas: atBlock(1),
  eth_feeHistory: atBlock(1),
  debug_traceCall: atBlock(1),
  // Blocks by number.
  eth_getBlockByNumber: atBlock(0),
  eth_getBlockTransactionCountByNumber: atBlock(0),
  eth_getUncleCountByBlockNumber: atBlock(0),
  eth_getUncleByBlockNumberAndIndex: atBlock(0),
  eth_getTransactionByBlockNumberAndIndex: atBlock(0),
  debug_traceBlockByNumber: atBlock(0),
  // Blocks by hash.
  eth_getBlockByHash: byBlockHash,
  eth_getBlockTransactionCountByHash: byBlockHash,
  eth_getUncleCountByBlockHash: byBlockHash,
  eth_getUncleByBlockHashAndIndex: byBlockHash,
  eth_getTransactionByBlockHashAndIndex: byBlockHash,
  debug_traceBlockByHash: byBlockHash,
  // Transactions by hash.
  eth_getTransactionByHash: byTxHash,
  eth_getTransactionReceipt: byTxHash,
  debug_traceTransaction: traceByTxHash,
  eth_getLogs: logs,
};

/** Methods after which the head is about to move (a block per transaction on automining chains). */
export const WRITES: ReadonlySet<string> = new Set(['eth_sendRawTransaction', 'eth_sendTransaction']);
