import { FILTER, READ, type DeclaredSpec } from '../method-spec.ts';
import { vendored } from './vendored.ts';

/** Logs, and the filters the gateway keeps itself (docs/decisions.md §8): a filter method is answered locally, never cached. */
export const logSpecs: readonly DeclaredSpec[] = [
  vendored('eth_getLogs', { ...READ, cost: 60, cache: 'block', block: { index: 0, by: 'filter' }, seen: 'items', heavy: true, splitsRange: true, holds: 'history', verify: 'logs', contracts: FILTER, logRange: 0 }),
  vendored('eth_newFilter', { ...READ, cost: 20, local: true, contracts: FILTER, logRange: 0 }),
  vendored('eth_newBlockFilter', { ...READ, cost: 20, local: true }),
  vendored('eth_newPendingTransactionFilter', { ...READ, cost: 20, local: true }),
  vendored('eth_getFilterChanges', { ...READ, cost: 20, local: true, seen: 'items' }),
  vendored('eth_getFilterLogs', { ...READ, cost: 60, local: true, seen: 'items' }),
  vendored('eth_uninstallFilter', { ...READ, cost: 10, local: true }),
];
