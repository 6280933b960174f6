import { claimChains } from '../store/embedded-chain-claim.ts';
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { bootstrap, type BootstrapSecrets } from '../accounts/bootstrap.ts';
import { accountsCatalogue } from '../accounts/catalogue.ts';
import { AccountsService } from '../accounts/service.ts';
import { loginBackoffOptions } from '../api/password-login.ts';
import { headKey } from '../shared-state/heads/heads-hub.ts';
import type { Config } from '../config/schema.ts';
import { Filters } from '../filters/filters.ts';
import { MemoryFilterStore } from '../shared-state/filter-store/memory-filter-store.ts';
import { Networks } from '../networks/networks.ts';
import { openStore } from '../store/open-store.ts';
import { ChainServer } from './chain-server.ts';
import { newChainSecret } from './chain-secret.ts';
import { keepServingOnFaults } from './primary-faults.ts';
import { PortClosing } from './port-closing.ts';
import { RestartDelay } from './restart-delay.ts';
import { eventMessage, PrimaryServer } from '../shared-state/ipc.ts';
import { PrimaryState } from '../shared-state/primary-state.ts';
import type { PrimaryEvents, PrimaryProtocol } from './protocol.ts';

/** `server.workers` as a number of processes: 0 is one per core. */
export function workerCount(config: Readonly<Config>): number {
  return config.server.workers === 0 ? availableParallelism() : config.server.workers;
}

/**
 * `nodegate start --workers N`: one port served by N processes. The primary serves no request itself: it
 * makes the store ready (migrations, first-start accounts and key, whose secrets one worker prints once), runs the
 * embedded chains (their anvils and journals, served to the workers by chain-server.ts), keeps the state the
 * workers share (shared-state/primary-state.ts: limits, filters, heads, leases, login back-off, as Redis does for instances), starts the
 * workers, starts again one that dies, and stops them all, then the chains, on SIGTERM/SIGINT/SIGHUP.
 * Each worker is a whole gateway on the shared port (node's cluster module hands it connections).
 */
export async function runPrimary(config: Readonly<Config>, log: Logger): Promise<number> {
  const n = workerCount(config);
  // The primary waits for PostgreSQL at start (database.startWaitMs); its workers start once it answered.
  const store = await openStore(config, log);
  let secrets: BootstrapSecrets;
  try {
    secrets = await bootstrap(store, new AccountsService(store, accountsCatalogue(config), () => {}), config);
  } finally {
    await store.close();
  }

  // The embedded networks only: nodes by URL are the workers' to reach (each with its own pool, as instances).
  const embedded = Object.fromEntries(Object.entries(config.networks).filter(([, net]) => net.upstreams.some((u) => u.url === 'embedded')));
  const networks = new Networks({ ...config, networks: embedded }, log, new Filters(new MemoryFilterStore(), config.filters.idleTimeoutMs));
  const server = new PrimaryServer<PrimaryProtocol>();
  const workers = new Map<number, Worker>();
  const broadcast = <T extends keyof PrimaryEvents & string>(topic: T, data: PrimaryEvents[T], except?: number) => {
    for (const [id, w] of workers) if (id !== except && w.isConnected()) w.send(eventMessage<PrimaryEvents, typeof topic>(topic, data));
  };
  // A head a worker showed: the primary's chain hears of it, so the journal records the block at once.
  const byKey = new Map(networks.list.map((net) => [headKey(net.chainId, config.networks[net.name].upstreams.map((u) => u.url)), net]));
  const state = new PrimaryState(server, broadcast, loginBackoffOptions(), (key, h) => byKey.get(key)?.chain.head.advance(h, true));
  for (const s of networks.supervisors) {
    const before = s.onRestart;
    const key = [...byKey].find(([, net]) => net.name === s.network)?.[0];
    s.onRestart = () => {
      before?.();
      if (key) state.forget(key);
      broadcast('reset', s.network);
    };
  }
  const chainSecret = newChainSecret();
  const chains = new ChainServer((name) => networks.embeddedUpstream(name), { timeoutMs: config.rpc.debugTimeoutMs, maxBodyBytes: 64 * 1024 * 1024, secret: chainSecret, log });
  const chainClaim = await claimChains(config);
  await networks.start();
  const chainsUrl = await chains.listen();

  let stopping = false;
  const port = new PortClosing();
  let printed = false;
  const ready = new Set<number>();
  const byIndex = new Map<number, Worker>();
  server.offer('primary', {
    start: (_args, id) => ({ config, chains: chainsUrl, chainSecret, index: indexOf(id), workers: n }),
    ready: (_url, id) => {
      ready.add(indexOf(id));
      // The banner once every worker listens (a client told the URL finds each of them serving), with the secrets.
      if (!printed && ready.size === n) {
        printed = true;
        byIndex.get(0)?.send(eventMessage<PrimaryEvents, 'banner'>('banner', secrets));
        secrets = {};
      }
    },
    // A stopping worker has closed its listener; it drains its connections once no worker listens (port-closing.ts).
    stoppedAccepting: (_args, id) => port.closed(id),
  });
  const indexOf = (id: number) => [...byIndex].find(([, w]) => w.id === id)?.[0] ?? -1;

  // The worker's entry is the CLI's (src/cli/worker.ts): a process entry, as main.ts, that prints the banner.
  const exec = fileURLToPath(new URL(`../cli/worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url));
  // Run from TypeScript through tsx's API (bin/nodegate.mjs): the workers need the loader on their command line.
  const tsx = exec.endsWith('.ts') && !process.execArgv.some((a) => a.includes('tsx')) ? ['--import', 'tsx'] : [];
  cluster.setupPrimary({ exec, execArgv: [...process.execArgv, ...tsx], args: [] });
  const restarts = new RestartDelay();
  const fork = (index: number) => {
    const w = cluster.fork({ NODEGATE_WORKER_INDEX: String(index) });
    restarts.started(index);
    workers.set(w.id, w);
    byIndex.set(index, w);
    w.on('message', (m: unknown) => server.handle(m, w.id, (r) => { if (w.isConnected()) w.send(r); }));
    w.on('exit', (code, signal) => {
      workers.delete(w.id);
      port.gone(w.id);
      state.gone(w.id);
      if (stopping) return;
      // A worker that died is started again (its requests in flight are lost, as with any crashed instance).
      const delay = restarts.exited(index);
      log.error({ worker: index, code, signal, retryInMs: delay }, 'worker exited; starting it again');
      setTimeout(() => { if (!stopping) fork(index); }, delay).unref();
    });
  };
  // From here the primary serves (its chains, its workers' calls): a fault nothing caught is logged, not fatal.
  const unlisten = keepServingOnFaults(process, log);
  for (let i = 0; i < n; i++) fork(i);
  log.info({ workers: n, chains: networks.supervisors.length, chainServer: chainsUrl }, 'primary started its workers');

  return new Promise<number>((resolve) => {
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      port.begin(workers.keys());
      log.info({ signal }, 'shutting down: the workers close the port, finish their requests, then the chains are journalled and stopped');
      const deadlineMs = config.server.stopDeadlineMs;
      const force = setTimeout(() => {
        log.error({ deadlineMs }, 'shutdown took too long; exiting');
        for (const w of workers.values()) w.process.kill('SIGKILL');
        resolve(1);
      }, deadlineMs);
      force.unref();
      await Promise.all([...workers.values()].map((w) => new Promise<void>((res) => {
        if (w.isDead()) return res();
        w.once('exit', () => res());
        w.send(eventMessage<PrimaryEvents, 'shutdown'>('shutdown', signal));
      })));
      try {
        await chains.close();
        await networks.close();
        await chainClaim?.release();
        await state.close();
        clearTimeout(force);
        resolve(0);
      } catch (err) {
        log.error({ err }, 'shutdown failed');
        resolve(1);
      }
    };
    process.once('SIGTERM', () => void stop('SIGTERM'));
    process.once('SIGINT', () => void stop('SIGINT'));
    process.once('SIGHUP', () => void stop('SIGHUP'));
  }).finally(unlisten);
}
