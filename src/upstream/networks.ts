import type { Logger } from 'pino';
import { ChainHead } from '../chain/chain-head.ts';
import type { Filters } from '../filters/filters.ts';
import { NetworkCache, ResponseCache } from '../cache/response-cache.ts';
import type { Config } from '../config/schema.ts';
import type { MethodEntry } from '../rpc/methods/method-table.ts';
import { buildMethodTables } from '../rpc/methods/method-table.ts';
import { AnvilSupervisor } from './embedded/anvil-supervisor.ts';
import { HttpUpstream } from './http-upstream.ts';
import type { Upstream } from './upstream.ts';

/** A configured network, ready to serve. */
export interface Network {
  readonly name: string;
  readonly chainId: number;
  readonly kind: 'embedded' | 'upstream';
  readonly upstream: Upstream;
  readonly methods: ReadonlyMap<string, MethodEntry>;
  /** The network's head: what every answer showed and the node's polled head (read-your-writes). */
  readonly head: ChainHead;
  /** The cache stage of this network; absent when `cache.enabled` is false. */
  readonly cache: NetworkCache | undefined;
  /** The gateway's filters (shared by the networks; each filter knows its own). */
  readonly filters: Filters;
}

/**
 * The networks of the configuration, found by name or alias. Embedded networks get an anvil each; the others
 * an HTTP upstream (the pool of several upstreams per network replaces this one upstream later).
 */
export class Networks {
  private readonly byName = new Map<string, Network>();
  readonly list: Network[] = [];
  private readonly embedded: AnvilSupervisor[] = [];

  constructor(config: Readonly<Config>, log: Logger, readonly filters: Filters) {
    const tables = buildMethodTables(config, filters.methods());
    const answers = config.cache.enabled ? new ResponseCache(config.cache.maxBytes, Object.keys(config.networks).length) : undefined;
    for (const [name, net] of Object.entries(config.networks)) {
      let upstream: Upstream;
      let supervisor: AnvilSupervisor | undefined;
      if (net.upstream === 'embedded') {
        supervisor = new AnvilSupervisor(name, net.chainId, config.embedded, config.dataDir, log, config.rpc.maxAnswerBytes);
        this.embedded.push(supervisor);
        upstream = supervisor;
      } else {
        upstream = new HttpUpstream(net.upstream, config.rpc.maxAnswerBytes);
      }
      const kind = net.upstream === 'embedded' ? 'embedded' : 'upstream';
      const depth = net.finalityDepth ?? (kind === 'embedded' ? 0 : 64);
      const head = new ChainHead(upstream, depth, config.cache.headPollMs, log.child({ network: name }));
      if (supervisor) supervisor.onRestart = () => head.reset();
      const cache = answers ? new NetworkCache(name, answers, head) : undefined;
      const network: Network = { name, chainId: net.chainId, kind, upstream, methods: tables.get(name)!, head, cache, filters };
      this.list.push(network);
      for (const n of [name, ...net.aliases]) this.byName.set(n, network);
    }
  }

  get(name: string): Network | undefined {
    return this.byName.get(name);
  }

  /** Aliases of a network, for the banner. */
  aliasesOf(network: Network): string[] {
    return [...this.byName].filter(([n, v]) => v === network && n !== network.name).map(([n]) => n);
  }

  /** Starts the embedded chains (in parallel) and resolves when all answer. */
  async start(): Promise<void> {
    await Promise.all(this.embedded.map((s) => s.start()));
    // The head is polled for the cache (answers tied to `latest` end when it moves); without a cache it learns
    // only from the answers that pass (read-your-writes needs no more), and asks the node nothing of its own.
    for (const n of this.list) if (n.cache) n.head.start();
  }

  /** The embedded supervisors, for shutdown and tests. */
  get supervisors(): readonly AnvilSupervisor[] {
    return this.embedded;
  }

  async close(): Promise<void> {
    for (const n of this.list) n.head.stop();
    await Promise.all(this.list.map((n) => n.upstream.close()));
  }

}
