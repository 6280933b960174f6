/**
 * The newest block an answer shows to exist, per method (read-your-writes, docs/decisions.md §9): once a caller has seen
 * block N in any answer, the network's head is at least N. Decided by a table built once; methods absent from it
 * show no block and cost one map lookup.
 */
type Seen = (params: unknown[], result: unknown) => number | undefined;

const quantity = (v: unknown): number | undefined => (typeof v === 'string' && v.startsWith('0x') ? Number(v) : undefined);

/** An object's `field` as a number (a mined transaction's blockNumber, a block's number); null or pending: none. */
const field = (name: 'blockNumber' | 'number'): Seen => (_params, result) =>
  result !== null && typeof result === 'object' ? quantity((result as Record<string, unknown>)[name]) : undefined;

/** The newest block among logs. */
const logs: Seen = (_params, result) => {
  if (!Array.isArray(result)) return undefined;
  let max: number | undefined;
  for (const log of result) {
    const n = log !== null && typeof log === 'object' ? quantity((log as { blockNumber?: unknown }).blockNumber) : undefined;
    if (n !== undefined && (max === undefined || n > max)) max = n;
  }
  return max;
};

const blockNumberField = field('number');

/** A block by number: the pending block is not a block yet. */
const blockByNumber: Seen = (params, result) => (params[0] === 'pending' ? undefined : blockNumberField(params, result));

const SEEN: ReadonlyMap<string, Seen> = new Map<string, Seen>([
  ['eth_blockNumber', (_params, result) => quantity(result)],
  ['eth_getTransactionReceipt', field('blockNumber')],
  ['eth_getTransactionByHash', field('blockNumber')],
  ['eth_getTransactionByBlockHashAndIndex', field('blockNumber')],
  ['eth_getTransactionByBlockNumberAndIndex', field('blockNumber')],
  ['eth_getBlockByHash', blockNumberField],
  ['eth_getBlockByNumber', blockByNumber],
  ['eth_getLogs', logs],
  ['eth_getFilterChanges', logs],
  ['eth_getFilterLogs', logs],
]);

/** The newest block `result` of `method(params)` shows, if any. */
export function blockSeenIn(method: string, params: unknown[], result: unknown): number | undefined {
  const seen = SEEN.get(method);
  return seen === undefined ? undefined : seen(params, result);
}
