import type { MethodSpec } from '../methods/method-spec.ts';
import { specOf } from '../methods/specs.ts';

const hex = (n: number) => `0x${n.toString(16)}`;

/** The network's safe and finalized blocks, where known. */
export interface Settled {
  safe?: number;
  finalized?: number;
}

/** A call's params with its tags pinned, the newest block it names (`block`) and, for a range, the oldest (`from`). */
export interface Pinned {
  params: unknown[];
  block: number;
  from?: number;
}

/**
 * A call with `latest` replaced by the agreed head (docs/decisions.md §9, consistent head), and the block the upstream that
 * answers must have; undefined when the call names no `latest` and no block number (nothing to pin, any upstream
 * may answer). A block number the call names is kept, and also becomes the block the upstream must have.
 * `safe` and `finalized` are pinned to the network's, when known; `pending` and `earliest` pass unchanged.
 */
export function pinLatest(method: string | Pick<MethodSpec, 'block'>, params: unknown[], head: number, settled: Settled = {}): Pinned | undefined {
  // Where the call names its block, and in which form, is its spec's (src/methods/specs/).
  const at = (typeof method === 'string' ? specOf(method) : method)?.block;
  if (!at || at.by === 'hash') return undefined;
  if (at.by === 'filter') return pinLogs(params, head);
  const v = params[at.index];
  // A bare block hash (geth takes a 66-character string as one) names no number: any upstream may answer.
  if (at.by === 'numberOrHash' && typeof v === 'string' && v.length === 66) return undefined;
  const optional = at.by === 'number' && at.optional;
  const to = v === 'latest' || (v === undefined && optional && params.length === at.index) ? head
    : v === 'safe' ? settled.safe : v === 'finalized' ? settled.finalized : undefined;
  if (to !== undefined) {
    const pinned = params.slice();
    pinned[at.index] = hex(to);
    return { params: pinned, block: to };
  }
  const n = blockNumberOf(v);
  return n === undefined ? undefined : { params, block: n };
}

/** eth_getLogs: a missing or `latest` bound becomes the head (a range by block hash is left alone). */
function pinLogs(params: unknown[], head: number): Pinned | undefined {
  const f = params[0];
  if (f === null || typeof f !== 'object' || 'blockHash' in f) return undefined;
  const q = f as { fromBlock?: unknown; toBlock?: unknown };
  const latest = (b: unknown) => b === undefined || b === 'latest';
  const from = latest(q.fromBlock) ? head : q.fromBlock === 'earliest' ? 0 : blockNumberOf(q.fromBlock);
  if (!latest(q.fromBlock) && !latest(q.toBlock)) {
    const to = blockNumberOf(q.toBlock);
    return to === undefined ? undefined : { params, block: to, ...(from === undefined ? {} : { from }) };
  }
  const pinned = { ...q, ...(latest(q.fromBlock) ? { fromBlock: hex(head) } : {}), ...(latest(q.toBlock) ? { toBlock: hex(head) } : {}) };
  return { params: [pinned, ...params.slice(1)], block: head, ...(from === undefined ? {} : { from }) };
}

/** A block number: a hex quantity, or an EIP-1898 object with `blockNumber`. */
function blockNumberOf(v: unknown): number | undefined {
  if (typeof v === 'string') return v.startsWith('0x') ? Number(v) : undefined;
  if (v !== null && typeof v === 'object' && typeof (v as { blockNumber?: unknown }).blockNumber === 'string') {
    return blockNumberOf((v as { blockNumber: string }).blockNumber);
  }
  return undefined;
}
