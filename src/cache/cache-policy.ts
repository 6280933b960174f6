import type { MethodSpec } from '../methods/method-spec.ts';
import { METHOD_SPECS } from '../methods/specs.ts';

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

/** A method's policy, from its spec's cache rule and block parameter (src/methods/specs/). */
export function policyOf(spec: MethodSpec): CachePolicy | undefined {
  switch (spec.cache) {
    case 'never': return undefined;
    case 'forever': case 'head': return always(spec.cache);
    case 'txHash': return byTxHash;
    case 'traceTx': return traceByTxHash;
    case 'block': return byBlock(spec);
  }
}

function byBlock(spec: MethodSpec): CachePolicy {
  const b = spec.block;
  if (!b) throw new Error(`${spec.name}: a 'block' cache rule needs a block parameter`);
  if (b.by === 'number') return atBlock(b.index);
  if (b.by === 'hash') return byBlockHash;
  if (b.by === 'filter') return logs;
  // A block number, tag or hash (eth_getBlockReceipts): a hash, bare or EIP-1898, as byBlockHash; else as a number.
  return (params, result, final) => (namesHash(params[b.index]) ? byBlockHash(params, result, final) : atBlock(b.index)(params, result, final));
}

/** A bare block hash (geth takes a 66-character string as one) or an EIP-1898 object naming one. */
function namesHash(v: unknown): boolean {
  if (typeof v === 'string') return v.length === 66;
  return v !== null && typeof v === 'object' && typeof (v as { blockHash?: unknown }).blockHash === 'string';
}

/** Methods absent from this table (writes, signatures, filters, accounts, the pending pool, extras) are never cached. */
export const CACHE_POLICIES: Readonly<Record<string, CachePolicy>> = Object.fromEntries(
  [...METHOD_SPECS.values()].flatMap((spec) => {
    const policy = policyOf(spec);
    return policy ? [[spec.name, policy]] : [];
  }),
);

/** Methods after which the head is about to move (a block per transaction on automining chains). */
export const WRITES: ReadonlySet<string> = new Set([...METHOD_SPECS.values()].filter((s) => s.write).map((s) => s.name));
