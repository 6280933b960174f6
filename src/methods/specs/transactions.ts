import { eth_getTransactionReceipt } from '../adapters/eth_getTransactionReceipt.ts';
import { eth_pendingTransactions } from '../adapters/eth_pendingTransactions.ts';
import { READ, type DeclaredSpec } from '../method-spec.ts';
import { vendored } from './vendored.ts';

/** Transactions and receipts: by hash, cached as the block they name; by block position, as that block. */
export const transactionSpecs: readonly DeclaredSpec[] = [
  vendored('eth_getTransactionByHash', { ...READ, cost: 15, cache: 'txHash', seen: 'blockNumber', pendingMayBeLag: true, verify: 'transaction' }),
  vendored('eth_getTransactionReceipt', { ...READ, cost: 15, cache: 'txHash', seen: 'blockNumber', verify: 'receipt', adapter: eth_getTransactionReceipt }),
  vendored('eth_getTransactionByBlockNumberAndIndex', {
    ...READ, cost: 15, cache: 'block', block: { index: 0, by: 'number', optional: false }, seen: 'blockNumber', holds: 'history', verify: 'transaction',
  }),
  vendored('eth_getTransactionByBlockHashAndIndex', { ...READ, cost: 15, cache: 'block', block: { index: 0, by: 'hash' }, seen: 'blockNumber', verify: 'transaction' }),
  // The node's pending pool: never cached.
  vendored('eth_pendingTransactions', { ...READ, cost: 20, scans: true, adapter: eth_pendingTransactions }),
];
