import { performance } from 'node:perf_hooks'; // the global one is a getter on globalThis, called at each use
import type { ResolvedKey } from '../auth/key-resolver.ts';
import type { Network } from '../networks/networks.ts';
import type { EndpointDeps } from './endpoint-deps.ts';
import type { FramedItem } from './framing.ts';
import type { Answer } from './respond.ts';

/**
 * Stage record, off the answer's path: each item's outcome and units to the usage recorder and the metrics (a Map
 * lookup and a few additions each; the store sees them in batches). `units(i)`: what item i cost.
 */
export function recorder({ usage, metrics }: Pick<EndpointDeps, 'usage' | 'metrics'>) {
  return (t0: number, network: Network, key: ResolvedKey, items: FramedItem[], answers: Array<Answer | undefined>, units: (i: number) => number): void => {
    if (!usage && !metrics) return;
    const ms = performance.now() - t0;
    metrics?.request(network.name, ms / 1000);
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      // Only names the network knows are labels: a caller cannot grow the tables with made-up method names. The
      // table's own string (see run.ts `start`).
      const method = ('method' in item ? network.methods.get(item.method)?.name : undefined) ?? '(invalid)';
      const code = answers[i]?.answer.error?.code ?? 0;
      const u = units(i);
      usage?.record(key.account.id, key.key.id, network.name, method, code, u, ms);
      metrics?.item(network.name, method, code, u);
    }
  };
}
