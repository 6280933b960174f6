import { READ, type DeclaredSpec } from '../method-spec.ts';
import { vendored } from './vendored.ts';

const byNumber = { index: 0, by: 'number', optional: false } as const;
const byHash = { index: 0, by: 'hash' } as const;

/** Blocks, their transaction counts and uncles, by number or by hash. */
export const blockSpecs: readonly DeclaredSpec[] = [
  vendored('eth_getBlockByNumber', { ...READ, cost: 16, cache: 'block', block: byNumber, holds: 'history', verify: 'block', seen: 'block', fullTransactions: 1 }),
  vendored('eth_getBlockByHash', { ...READ, cost: 16, cache: 'block', block: byHash, verify: 'block', seen: 'block', fullTransactions: 1 }),
  vendored('eth_getBlockTransactionCountByNumber', { ...READ, cost: 10, cache: 'block', holds: 'history', block: { index: 0, by: 'number', optional: true } }),
  vendored('eth_getBlockTransactionCountByHash', { ...READ, cost: 10, cache: 'block', block: byHash }),
  vendored('eth_getUncleCountByBlockNumber', { ...READ, cost: 10, cache: 'block', block: byNumber }),
  vendored('eth_getUncleCountByBlockHash', { ...READ, cost: 10, cache: 'block', block: byHash }),
  vendored('eth_getUncleByBlockNumberAndIndex', { ...READ, cost: 10, cache: 'block', block: byNumber }),
  vendored('eth_getUncleByBlockHashAndIndex', { ...READ, cost: 10, cache: 'block', block: byHash }),
];
