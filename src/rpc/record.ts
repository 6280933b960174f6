import { performance } from 'node:perf_hooks'; // the global one is a getter on globalThis, called at each use
import type { ResolvedKey } from '../auth/key-resolver.ts';
import type { Network } from '../networks/networks.ts';
import type { Call } from './call.ts';
import type { EndpointDeps } from './endpoint-deps.ts';
import type { FramedItem } from './framing.ts';
import { responseJson, type Answer } from './respond.ts';
import { cacheHeader } from '../cache/response-cache.ts';

/** What the request explorer reads of a request besides its answers: its id, its body's size, its calls and pieces. */
export interface Recorded {
  requestId: string;
  bodyBytes: number;
  /** The calls that ran (absent: none did, the request was refused at its limit). */
  calls?: ReadonlyArray<Call | undefined>;
  /** The answers as serialised (a piece's length is the answer's size). */
  pieces?: ReadonlyArray<string | Buffer | undefined>;
}

/**
 * Stage record, off the answer's path: each item's outcome and units to the usage recorder and the metrics (a Map
 * lookup and a few additions each; the store sees them in batches), and each call to the request explorer (one entry
 * appended to its buffer). `units(i)`: what item i cost.
 */
export function recorder({ usage, metrics, requests }: Pick<EndpointDeps, 'usage' | 'metrics' | 'requests'>) {
  return (t0: number, network: Network, key: ResolvedKey, items: FramedItem[], answers: Array<Answer | undefined>, units: (i: number) => number, r: Recorded): void => {
    if (!usage && !metrics && !requests) return;
    const ms = performance.now() - t0;
    metrics?.request(network.name, ms / 1000);
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      // Only names the network knows are labels: a caller cannot grow the tables with made-up method names. The
      // table's own string (see run.ts `start`).
      const method = ('method' in item ? network.methods.get(item.method)?.name : undefined) ?? '(invalid)';
      const error = answers[i]?.answer.error;
      const code = error?.code ?? 0;
      const u = units(i);
      usage?.record(key.accountId, key.keyId, network.name, method, code, u, ms, key);
      metrics?.item(network.name, method, code, u);
      if (requests) {
        const call = r.calls?.[i];
        // An answer made before any stage ran (a refusal) has no piece: it is serialised here, errors only.
        const piece = r.pieces?.[i] ?? (item.notification || !answers[i] ? undefined : responseJson(item.id, answers[i]!.answer));
        requests.record({
          accountId: key.accountId, keyId: key.keyId, network: network.name, method, code, message: error?.message,
          latencyMs: ms, computeUnits: u, requestBytes: r.bodyBytes, responseBytes: piece === undefined ? 0 : piece.length,
          // The member is told HIT only of its own account's entries, as X-Cache tells it (cache-policy).
          cache: call?.cache && cacheHeader(call.cache), node: call?.cache === undefined || call.cache === 'MISS' ? call?.node : undefined,
          requestId: r.requestId, params: 'params' in item ? item.params : undefined,
        }, key.plan, key);
      }
    }
  };
}
