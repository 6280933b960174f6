import type { Logger } from 'pino';
import type { Filters } from '../filters/filters.ts';
import { NetworkCache, ResponseCache } from '../cache/response-cache.ts';
import { SharedTier } from '../cache/shared-tier.ts';
import type { SharedAnswers } from '../shared-state/answers/shared-answers.ts';
import type { Config } from '../config/schema.ts';
import { upstreamHeaders } from '../config/upstream-headers.ts';
import { AnswerBudget } from '../limits/answer-budget.ts';
import type { MethodEntry } from './method-table.ts';
import { buildMethodTables } from './method-table.ts';
import { Subscriptions } from '../subscriptions/subscriptions.ts';
import { AnvilSupervisor } from '../upstream/embedded/anvil-supervisor.ts';
import { HttpUpstream } from '../upstream/http-upstream.ts';
import { HEAD_BOUND } from '../chain/agreed-head.ts';
import { Chain } from '../chain/chain.ts';
import type { ChainHead } from '../chain/chain-head.ts';
import type { HeadsHub } from '../shared-state/heads/heads-hub.ts';
import type { Upstream } from '../upstream/upstream.ts';
import { UpstreamMember } from '../chain/upstream-member.ts';

/** A configured network, ready to serve. */
export interface Network {
  readonly name: string;
  readonly chainId: number;
  readonly kind: 'embedded' | 'upstream';
  /** The chain module: the head, its events, and the routing of every call to the upstreams. */
  readonly chain: Chain;
  readonly methods: ReadonlyMap<string, MethodEntry>;
  /** The chain module's head (read-your-writes), for the cache and `eth_blockNumber`. */
  readonly head: ChainHead;
  /** The cache stage of this network; absent when `cache.enabled` is false. */
  readonly cache: NetworkCache | undefined;
  /** The gateway's filters (shared by the networks; each filter knows its own). */
  readonly filters: Filters;
}

/**
 * The networks of the configuration, found by name or alias: each gets its chain module, with its upstreams (an
 * anvil Nodegate supervises for `embedded`, else HTTP nodes), its method table and its cache stage; the filters
 * and the embedded chains' watchdogs subscribe to its events here.
 */
export class Networks {
  private readonly byName = new Map<string, Network>();
  readonly list: Network[] = [];
  private readonly embedded: AnvilSupervisor[] = [];

  /** The subscription methods' feeds (eth_subscribe over a WebSocket), shared by the networks. */
  readonly subscriptions = new Subscriptions();

  /**
   * `cluster`: where the heads are shared (Redis for instances, the primary for workers). `embeddedAt`: in a worker,
   * the URL at which the primary serves an embedded chain (workers/chain-server.ts): the primary runs the anvils and
   * their journals, and the workers reach them there instead of starting their own. `answers`: the cache's shared
   * tier (`cache.shared`), behind each network's memory cache.
   */
  constructor(config: Readonly<Config>, log: Logger, readonly filters: Filters, cluster?: HeadsHub, embeddedAt?: (network: string) => { url: string; headers: Readonly<Record<string, string>> }, answers?: SharedAnswers) {
    // One budget for the answers of every network: it bounds the process's memory, which they share.
    const budget = new AnswerBudget(config.rpc.maxAnswerBytes, config.rpc.maxAnswerBytesInFlight);
    const memory = config.cache.enabled ? new ResponseCache(config.cache.maxBytes, Object.keys(config.networks).length) : undefined;
    const shared = config.cache.shared;
    const tier = memory && answers ? new SharedTier(answers, { ttlMs: shared.ttlSeconds * 1000, headTtlMs: shared.headTtlMs, waitMs: shared.waitMs }) : undefined;
    const chains = new Map<string, Chain>();
    const depths = new Map<string, number>();
    for (const [name, net] of Object.entries(config.networks)) {
      const nlog = log.child({ network: name });
      let supervisor: AnvilSupervisor | undefined;
      const members = net.upstreams.map((u, i) => {
        if (u.url !== 'embedded') {
          const headers = upstreamHeaders(u.headers, `networks.${name}.upstreams[${i}].headers`);
          const http = new HttpUpstream(u.url, budget, undefined, u.ws, nlog, Object.keys(headers).length > 0 ? headers : undefined);
          http.maxBatch = u.maxBatch;
          return new UpstreamMember(http, u, i);
        }
        if (embeddedAt) {
          const at = embeddedAt(name);
          return new UpstreamMember(new HttpUpstream(at.url, budget, undefined, undefined, undefined, at.headers), u, i);
        }
        supervisor = new AnvilSupervisor(name, net.chainId, config.embedded, config.dataDir, log, budget);
        this.embedded.push(supervisor);
        return new UpstreamMember(supervisor, u, i);
      });
      const kind = net.upstreams.some((u) => u.url === 'embedded') ? 'embedded' : 'upstream';
      const policy = {
        maxLagBlocks: net.maxLagBlocks ?? config.upstreams.maxLagBlocks,
        quorum: net.quorum ?? config.upstreams.quorum,
        breakerFailures: config.upstreams.breakerFailures,
        breakerCooldownMs: config.upstreams.breakerCooldownMs,
        hedge: { minMs: config.upstreams.hedgeMinMs, maxMs: config.upstreams.hedgeMaxMs },
        limitWaitMs: config.upstreams.limitWaitMs,
        logsPieces: config.upstreams.logsPieces,
        maxAnswerBytes: config.rpc.maxAnswerBytes,
        // Nodegate's own anvil is not checked: it is believed as it mines, and its snapshot restores are known here.
        verify: kind === 'embedded' ? 'off' as const : net.verify,
      };
      const depth = net.finalityDepth ?? (kind === 'embedded' ? 0 : 64);
      // Nodegate's own anvil is believed whatever it mines at once (anvil_mine of 10,000 blocks); nodes by URL
      // are held to the head bound (agreed-head.ts).
      depths.set(name, depth);
      const chain = new Chain(name, net.chainId, members, policy, depth, config.upstreams.checkIntervalMs, nlog, kind === 'embedded' ? undefined : HEAD_BOUND);
      chains.set(name, chain);
      // What each node holds (pruned state, expired history) is probed for nodes by URL; an embedded chain holds all.
      if (kind === 'upstream') chain.probeHoldings(config.upstreams.holdingsProbeMs);
      // Cluster mode: instances in front of the same nodes share one head (shared-state/heads/). An embedded
      // chain is this process's own: nothing to share.
      if (cluster && (kind === 'upstream' || cluster.embeddedToo)) {
        chain.head.shared = cluster.network(net.chainId, net.upstreams.map((u) => u.url), (n) => chain.head.advance(n, true));
      }
      // An embedded chain's watchdog hears of its head from the rounds: it keeps to them.
      if (kind === 'upstream') chain.checkWhenIdle(config.upstreams.idleCheckMs, config.upstreams.idleAfterMs);
      // Subscribers: the embedded chain's watchdog hears of heads, and its restarts reset the chain.
      if (supervisor) {
        const s = supervisor;
        s.onRestart = () => chain.reset();
        chain.on('head', (n) => s.headSeen(n));
      }
      chain.on('transaction', (hash) => filters.noteTransaction(name, hash));
    }
    const tables = buildMethodTables(config, { ...filters.methods(), ...this.subscriptions.methods() }, (name) => () => chains.get(name)!.headNumber());
    for (const [name, net] of Object.entries(config.networks)) {
      const chain = chains.get(name)!;
      const kind = net.upstreams.some((u) => u.url === 'embedded') ? 'embedded' : 'upstream';
      // An embedded chain is each instance's own: its answers are not the others' to share.
      const shares = kind === 'upstream' ? tier : undefined;
      const cache = memory ? new NetworkCache(name, memory, chain.head, shares) : undefined;
      // The cache subscribes: a chain that went back or was replaced leaves nothing cached that holds. The shared
      // tier loses this network's answers tied to the head at any reorganisation, and all of them when blocks below
      // the finality depth of the old head went (a block taken as final was not).
      if (cache) {
        chain.on('reset', () => cache.dropAll());
        chain.on('reorg', (c) => {
          cache.dropAll();
          if (shares) void (c.from - c.to > depths.get(name)! ? shares.dropNetwork(name) : shares.dropHead(name));
        });
      }
      const network: Network = { name, chainId: net.chainId, kind, chain, methods: tables.get(name)!, head: chain.head, cache, filters };
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

  /** Starts the embedded chains (in parallel), then every chain module's checks; resolves when all ran once. */
  async start(): Promise<void> {
    await Promise.all(this.embedded.map((s) => s.start()));
    await Promise.all(this.list.map((n) => n.chain.start()));
  }

  /** The embedded chain of `network` (this process runs its anvil), as an upstream; undefined if none. */
  embeddedUpstream(network: string): Upstream | undefined {
    return this.embedded.find((s) => s.network === network);
  }

  /** The embedded supervisors, for shutdown and tests. */
  get supervisors(): readonly AnvilSupervisor[] {
    return this.embedded;
  }

  async close(): Promise<void> {
    await Promise.all(this.list.map((n) => n.chain.close()));
  }
}
