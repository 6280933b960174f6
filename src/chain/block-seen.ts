import type { SeenRule } from '../methods/method-spec.ts';
import { METHOD_SPECS } from '../methods/specs.ts';

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

/** The newest block among items that name theirs: logs, receipts. */
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

/** A block (by number or hash): the pending block is not a block yet. */
const blockByNumber: Seen = (params, result) => (params[0] === 'pending' ? undefined : blockNumberField(params, result));

const RULES: Readonly<Record<SeenRule, Seen | undefined>> = {
  none: undefined,
  quantity: (_params, result) => quantity(result),
  blockNumber: field('blockNumber'),
  block: blockByNumber,
  items: logs,
};

/** What each method's answer shows, from its spec's rule (src/methods/specs/). */
const SEEN: ReadonlyMap<string, Seen> = new Map(
  [...METHOD_SPECS.values()].flatMap((spec) => {
    const seen = RULES[spec.seen];
    return seen ? [[spec.name, seen] as const] : [];
  }),
);

/** The newest block `result` of `method(params)` shows, if any. */
export function blockSeenIn(method: string, params: unknown[], result: unknown): number | undefined {
  const seen = SEEN.get(method);
  return seen === undefined ? undefined : seen(params, result);
}
