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
