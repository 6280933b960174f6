import type { Leases } from '../leases/leases.ts';
import type { SharedStateClient } from '../protocol.ts';
import { checksLease, headKey, type HeadsHub, type SharedHead } from './heads-hub.ts';
import { TurnReads } from './turn-reads.ts';

/**
 * Each network's head, shared by the workers of `--workers N` through their primary (memory-heads.ts there),
 * embedded chains included (they are the primary's, and every worker shows them). Reads of one turn of the event
 * loop go in one call. A primary that does not answer in time fails the call (the shared state's fallback then
 * answers from this worker's own head).
 */
export class RemoteHeads implements HeadsHub {
  readonly embeddedToo = true;
  private readonly followers = new Map<string, (n: number) => void>();
  /** The reads of one turn of the event loop, in one call. */
  private readonly reads = new TurnReads((keys) => this.primary.call('heads', 'read', [keys]));

  /** `leases`: who checks each network's nodes (its lease, `checks:{key}`). */
  constructor(private readonly primary: SharedStateClient, private readonly leases: Leases) {
    primary.on('head', ({ key, n, mode }) => {
      if (mode === 'up') this.followers.get(key)?.(n);
    });
  }

  network(chainId: number, upstreams: readonly string[], follow: (n: number) => void): SharedHead {
    const key = headKey(chainId, upstreams);
    this.followers.set(key, follow);
    return {
      publish: (n) => this.primary.call('heads', 'publish', [key, n]),
      lower: (n) => this.primary.call('heads', 'lower', [key, n]),
      read: () => this.reads.read(key),
      leads: async (ttlMs) => this.leases.take(checksLease(key), ttlMs),
      report: (report, ttlMs) => this.primary.call('heads', 'report', [key, report, ttlMs]),
      lastReport: () => this.primary.call('heads', 'lastReport', [key]).then((r) => r ?? undefined),
    };
  }

  async close(): Promise<void> {}
}
