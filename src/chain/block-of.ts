import type { BlockRef } from './chain-window.ts';

/**
 * A block's number, hash and parent from a node's block or header object (an answer, or a pushed new head);
 * undefined for null or an object without them.
 */
export function blockOf(result: unknown): BlockRef | undefined {
  const b = result as { number?: unknown; hash?: unknown; parentHash?: unknown } | null;
  if (!b || typeof b !== 'object' || typeof b.number !== 'string' || typeof b.hash !== 'string') return undefined;
  return { number: Number(b.number), hash: b.hash, parentHash: typeof b.parentHash === 'string' ? b.parentHash : undefined };
}
