/**
 * The processes the RPC benchmarks share in one `npm run bench`: one anvil, the bare proxy and Nodegate in front
 * of it, started when a benchmark first needs them, warmed up once, and all stopped by `close()`.
 */
import { load } from './load.ts';
import { startAnvil, startBareProxy, startBareWsProxy, startFloor, startNodegateTarget, type Target } from './targets.ts';
import { balanceDistinct, blockNumber, SignedTransactions } from './workloads.ts';

export class BenchTargets {
  private readonly started = new Map<string, Promise<Target>>();
  /** Transactions are signed from accounts that no earlier run used. */
  readonly txs = new SignedTransactions();

  anvil(): Promise<Target> {
    return this.once('anvil', startAnvil);
  }

  /** node:http answering from memory: the floor of any Node.js gateway (bench/floor.ts). */
  floor(): Promise<Target> {
    return this.once('floor', () => startFloor());
  }

  /** The floor answering with the headers a Nodegate cache hit carries. */
  floorWithHeaders(): Promise<Target> {
    return this.once('floor-headers', () => startFloor(true));
  }

  /** The floor with its head made as Nodegate makes it (bench/floor.ts raw). */
  floorRaw(): Promise<Target> {
    return this.once('floor-raw', () => startFloor(false, [], true));
  }

  proxy(): Promise<Target> {
    return this.once('proxy', async () => startBareProxy((await this.anvil()).url));
  }

  /** The same with one WebSocket to anvil instead of undici's HTTP (bench/bare-ws-proxy.ts). */
  wsProxy(): Promise<Target> {
    return this.once('ws-proxy', async () => startBareWsProxy((await this.anvil()).url));
  }

  /** Nodegate uncached, limits on (a plan too generous to refuse anything). */
  nodegate(): Promise<Target> {
    return this.once('nodegate', async () => startNodegateTarget((await this.anvil()).url));
  }

  /** Nodegate with the response cache on (and limits on). */
  nodegateCached(): Promise<Target> {
    return this.once('nodegate-cached', async () => startNodegateTarget((await this.anvil()).url, { cache: true }));
  }

  /** Nodegate with `limits.enabled: false`. */
  nodegateNoLimits(): Promise<Target> {
    return this.once('nodegate-nolimits', async () => startNodegateTarget((await this.anvil()).url, { limits: false }));
  }

  /** Nodegate with usage recording and /metrics off. */
  nodegateNoAnalytics(): Promise<Target> {
    return this.once('nodegate-noanalytics', async () => startNodegateTarget((await this.anvil()).url, { analytics: false }));
  }

  /** Nodegate with traces sampled at `sampleRatio`, exported to `otlpUrl`. */
  nodegateTraced(sampleRatio: number, otlpUrl: string, followCallerSampled = false): Promise<Target> {
    return this.once(`nodegate-traced-${sampleRatio}-${followCallerSampled}`, async () => startNodegateTarget((await this.anvil()).url, { tracing: { sampleRatio, otlpUrl, followCallerSampled } }));
  }

  /** Stops every process started, the upstream last. */
  async close(): Promise<void> {
    const all = await Promise.allSettled([...this.started.values()]);
    const targets = all.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const stop = (t: Target) => t.stop().catch((err) => console.error(`stopping ${t.name}:`, err));
    await Promise.all(targets.filter((t) => t.name !== 'anvil').map(stop));
    await Promise.all(targets.filter((t) => t.name === 'anvil').map(stop));
    this.started.clear();
  }

  private once(id: string, start: () => Promise<Target>): Promise<Target> {
    let p = this.started.get(id);
    if (!p) {
      p = start().then(async (t) => {
        // JIT, keep-alive pools, anvil's state caches: nothing is measured cold.
        await load(t.url, blockNumber(), { connections: 16, duration: 1 });
        await load(t.url, balanceDistinct(), { connections: 16, duration: 1 });
        return t;
      });
      this.started.set(id, p);
    }
    return p;
  }
}
