import { debug_traceBlockByHash } from '../adapters/debug_traceBlockByHash.ts';
import { debug_traceBlockByNumber } from '../adapters/debug_traceBlockByNumber.ts';
import { debug_traceTransaction } from '../adapters/debug_traceTransaction.ts';
import { CALL, READ, type DeclaredSpec } from '../method-spec.ts';
import { vendored } from './vendored.ts';

/** Tracing: the dearest calls (plans may exclude `debug_*`, which have the long time-out). */
export const debugSpecs: readonly DeclaredSpec[] = [
  // A trace does not say its transaction's block: kept until the head moves.
  vendored('debug_traceTransaction', { ...READ, cost: 1000, trace: true, cache: 'traceTx', adapter: debug_traceTransaction }),
  // The block is followed by the trace config, so it cannot be left out.
  vendored('debug_traceCall', { ...READ, cost: 1000, trace: true, cache: 'block', block: { index: 1, by: 'number', optional: false }, holds: 'state', gasCapped: true, contracts: CALL }),
  vendored('debug_traceBlockByNumber', {
    ...READ, cost: 1000, trace: true, cache: 'block', block: { index: 0, by: 'number', optional: false }, holds: 'state', adapter: debug_traceBlockByNumber,
  }),
  vendored('debug_traceBlockByHash', { ...READ, cost: 1000, trace: true, cache: 'block', block: { index: 0, by: 'hash' }, adapter: debug_traceBlockByHash }),
];
