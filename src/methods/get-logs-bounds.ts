import { GatewayError } from '../errors/gateway-error.ts';
import type { Adapter, Next } from './adapters/adapter.ts';

export interface GetLogsBounds {
  /** Blocks one query may span; 0: any. */
  maxBlockRange: number;
  /** Logs one answer may hold; 0: any. */
  maxResults: number;
}

interface LogFilter {
  fromBlock?: string;
  toBlock?: string;
  blockHash?: string;
}

const hex = (n: number) => '0x' + n.toString(16);

/**
 * eth_getLogs bounds (docs/decisions.md §7): a query spans at most `maxBlockRange` blocks and an answer holds at most
 * `maxResults` logs. Over either, -32005 in Infura's wording with a block range that would fit
 * ("Try with this block range [0x…, 0x…]."), which indexers (ethers, The Graph, Ponder) parse to split their query.
 * A policy of the gateway, not a node's gap, but it wraps the call the same way an adapter does.
 */
export function getLogsBounds(bounds: GetLogsBounds, head: () => Promise<number | undefined>): Adapter {
  return async (method, params, next) => {
    const filter = (params[0] ?? {}) as LogFilter;
    let from: number | undefined;
    if (filter.blockHash === undefined && bounds.maxBlockRange > 0) {
      const range = await blockRange(filter, next, head);
      if (range) {
        from = range.from;
        // A reversed range is the node's to refuse, with its own message.
        if (range.to >= range.from && range.to - range.from + 1 > bounds.maxBlockRange) {
          throw tooMany(bounds, range.from, range.from + bounds.maxBlockRange - 1);
        }
      }
    }
    const answer = await next(method, params);
    const logs = answer.result;
    if (bounds.maxResults > 0 && Array.isArray(logs) && logs.length > bounds.maxResults) {
      // Logs come in block order: the range that fits ends before the block of the first log over the bound.
      const first = from ?? Number(logs[0]?.blockNumber);
      const over = Number(logs[bounds.maxResults]?.blockNumber);
      throw tooMany(bounds, first, Number.isFinite(over) ? Math.max(first, over - 1) : first);
    }
    return answer;
  };
}

function tooMany(bounds: GetLogsBounds, from: number, to: number): GatewayError {
  return new GatewayError('LOGS_TOO_MANY', { limit: bounds.maxResults || bounds.maxBlockRange, from: hex(from), to: hex(to) });
}

/** What the network's head knows at once (the chain module's ChainHead): no node is asked. */
export interface KnownHead {
  readonly number: number | undefined;
  readonly safe: number | undefined;
  readonly finalized: number | undefined;
}

/**
 * A key's own eth_getLogs range (docs/security.md, "Keys"), decided at once from what the head knows: `latest` and
 * `pending` are the head; `safe` and `finalized` the upstreams' when known, else the head (never further back than
 * they are, so a range ending there counts at most as wide as it is). A range wider than `max` is the same -32005 as
 * the network's bound, naming the range that fits. Nothing is decided of a filter by block hash, a reversed range
 * (the node's to refuse), or a tag the head cannot read yet (before its first block): the network's bound still holds.
 */
export function keyRangeRefusal(max: number, filter: unknown, head: KnownHead): GatewayError | undefined {
  const f = (filter ?? {}) as LogFilter;
  if (f.blockHash !== undefined) return undefined;
  const from = knownBlock(f.fromBlock, head);
  const to = knownBlock(f.toBlock, head);
  if (from === undefined || to === undefined || to < from || to - from + 1 <= max) return undefined;
  return tooMany({ maxBlockRange: max, maxResults: 0 }, from, from + max - 1);
}

function knownBlock(tag: string | undefined, head: KnownHead): number | undefined {
  const t = tag ?? 'latest';
  if (t.startsWith('0x')) return Number(t);
  if (t === 'earliest') return 0;
  if (t === 'safe') return head.safe ?? head.number;
  if (t === 'finalized') return head.finalized ?? head.number;
  return head.number;
}

/**
 * The filter's range as block numbers: `latest` is the chain module's head (the network's agreed head, never asked
 * of a node here); safe and finalized are asked of the node. Undefined: cannot tell.
 */
async function blockRange(filter: LogFilter, next: Next, head: () => Promise<number | undefined>): Promise<{ from: number; to: number } | undefined> {
  let latest: Promise<number | undefined> | undefined;
  const resolve = async (tag: string | undefined): Promise<number | undefined> => {
    const t = tag ?? 'latest';
    if (t.startsWith('0x')) return Number(t);
    if (t === 'earliest') return 0;
    if (t === 'latest' || t === 'pending') return (latest ??= head());
    // safe, finalized: the node knows which block that is.
    const block = await next('eth_getBlockByNumber', [t, false]);
    const n = (block.result as { number?: unknown } | null)?.number;
    return typeof n === 'string' ? Number(n) : undefined;
  };
  const [from, to] = await Promise.all([resolve(filter.fromBlock), resolve(filter.toBlock)]);
  return from === undefined || to === undefined || Number.isNaN(from) || Number.isNaN(to) ? undefined : { from, to };
}
