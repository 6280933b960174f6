import type { Logger } from 'pino';
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
}

/**
 * The networks of the configuration, found by name or alias. Embedded networks get an anvil each; the others
 * an HTTP upstream (the pool of several upstreams per network replaces this one upstream later).
 */
export class Networks {
  private readonly byName = new Map<string, Network>();
  readonly list: Network[] = [];
  private readonly embedded: AnvilSupervisor[] = [];

  constructor(config: Readonly<Config>, log: Logger) {
    const tables = buildMethodTables(config);
    for (const [name, net] of Object.entries(config.networks)) {
      let upstream: Upstream;
      if (net.upstream === 'embedded') {
        const sup = new AnvilSupervisor(name, net.chainId, config.embedded, config.dataDir, log);
        this.embedded.push(sup);
        upstream = sup;
      } else {
        upstream = new HttpUpstream(net.upstream);
      }
      const network: Network = { name, chainId: net.chainId, kind: net.upstream === 'embedded' ? 'embedded' : 'upstream', upstream, methods: tables.get(name)! };
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
  }

  /** The embedded supervisors, for shutdown and tests. */
  get supervisors(): readonly AnvilSupervisor[] {
    return this.embedded;
  }

  async close(): Promise<void> {
    await Promise.all(this.list.map((n) => n.upstream.close()));
  }

}
