import { METHOD_SPECS } from './specs.ts';

/**
 * Compute-unit cost of each method (docs/decisions.md §7), from its spec (src/methods/specs/), shaped like Alchemy's
 * table: cheap reads ~10, eth_call 26, eth_getLogs 60, eth_getBlockReceipts 150, sending a transaction 250,
 * tracing 1000. `limits.costs` in the configuration overrides any entry; a method without a spec (an operator's
 * extra method) costs `limits.defaultCost`.
 */
export const DEFAULT_COSTS: Readonly<Record<string, number>> = Object.fromEntries([...METHOD_SPECS.values()].map((s) => [s.name, s.cost]));
