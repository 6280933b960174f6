import { CALL, READ, type DeclaredSpec } from '../method-spec.ts';
import { vendored } from './vendored.ts';

/** State at a block: cached as the block says; a left-out block means `latest`. */
export const stateSpecs: readonly DeclaredSpec[] = [
  vendored('eth_getBalance', { ...READ, cost: 10, cache: 'block', holds: 'state', block: { index: 1, by: 'number', optional: true } }),
  vendored('eth_getCode', { ...READ, cost: 10, cache: 'block', holds: 'state', block: { index: 1, by: 'number', optional: true } }),
  vendored('eth_getTransactionCount', { ...READ, cost: 10, cache: 'block', holds: 'state', block: { index: 1, by: 'number', optional: true } }),
  vendored('eth_getStorageAt', { ...READ, cost: 10, cache: 'block', holds: 'state', block: { index: 2, by: 'number', optional: true } }),
  // The block is followed by geth's optional state and block overrides.
  vendored('eth_call', { ...READ, cost: 26, cache: 'block', holds: 'state', block: { index: 1, by: 'number', optional: true }, gasCapped: true, contracts: CALL }),
  vendored('eth_estimateGas', { ...READ, cost: 87, cache: 'block', holds: 'state', block: { index: 1, by: 'number', optional: true }, gasCapped: true, contracts: CALL }),
];
