import type { PrimaryServer } from './ipc.ts';
import type { BackoffOptions } from './login-backoff/login-backoff.ts';
import { keptForWorkers } from './open-shared-state.ts';
import type { SharedStateEvents, SharedStateProtocol } from './protocol.ts';

/** The primary's side of the shared state's protocol. */
export type ForWorkers = PrimaryServer<SharedStateProtocol>;
/** Tells every worker but `except` of an event of the shared state. */
export type Broadcast = (...event: { [T in keyof SharedStateEvents]: [topic: T, data: SharedStateEvents[T], except?: number] }[keyof SharedStateEvents]) => void;

/**
 * What the workers of one machine share, kept in the primary (`--workers N`): what Redis keeps for instances, here
 * in the memory variants one process uses (open-shared-state.ts `keptForWorkers`), so that N workers decide exactly
 * as one process would: one bucket per account (leased to the workers in shares: leased-buckets.ts), one set of
 * filters, one head per network (pushed to every worker as it moves), one lease per network's checks, one login
 * back-off. Each worker is a holder of its own, named by its channel.
 */
export class PrimaryState {
  private readonly kept: ReturnType<typeof keptForWorkers>;

  /**
   * `broadcast(topic, data, except)` tells every worker but `except`; `headSeen(key, n)` tells the primary's own
   * chains (the embedded ones, whose journal records each block the workers show). `now` is the filters' clock
   * (tests run the filter store contract on their own).
   */
  constructor(server: ForWorkers, private readonly broadcast: Broadcast, backoff: BackoffOptions, headSeen: (key: string, n: number) => void, now?: () => number) {
    const kept = (this.kept = keptForWorkers(backoff, now));
    const { buckets: l, filters: f, heads: h, leases, loginBackoff: b } = kept;
    server.offer('limiter', {
      lease: ([ask], worker) => l.lease(ask, worker),
      giveBack: ([share], worker) => l.giveBack(share, worker),
    });
    server.offer('filters', {
      add: ([filter, max]) => f.add(filter, max),
      get: ([id]) => f.get(id),
      update: ([filter]) => f.update(filter),
      remove: ([id]) => f.remove(id),
      noteSent: ([network, hash]) => f.noteSent(network, hash),
      sentSince: ([network, after]) => f.sentSince(network, after),
      size: () => f.size,
    });
    server.offer('heads', {
      publish: ([key, n], worker) => h.publish(key, n, 'up', String(worker)),
      lower: ([key, n], worker) => h.publish(key, n, 'down', String(worker)),
      read: ([keys]) => h.read(keys),
      report: ([key, report, ttlMs]) => h.report(key, report, ttlMs),
      lastReport: ([key]) => h.lastReport(key),
    });
    server.offer('leases', { take: ([name, ttlMs], worker) => leases.take(name, ttlMs, String(worker)) });
    server.offer('backoff', {
      waitSeconds: ([email, address, now]) => b.waitSeconds(email, address, now),
      failed: ([email, address, now]) => b.failed(email, address, now),
      succeeded: ([email, address]) => b.succeeded(email, address),
    });
    server.offer('shared', { ping: () => {} });
    // A head that moved is told to every other worker, and (up) to the primary's own chains.
    h.listen((key, n, mode, from) => {
      broadcast('head', { key, n, mode }, Number(from));
      if (mode === 'up') headSeen(key, n);
    });
  }

  /** A chain restarted from its journal (embedded): its shared head starts again from what it will show. */
  forget(key: string): void {
    this.kept.heads.forget(key);
    this.broadcast('head', { key, n: -1, mode: 'down' });
  }

  /** A worker that stopped: the shares of the buckets it held go back to them. */
  gone(worker: number): void {
    this.kept.buckets.gone(worker);
  }

  async close(): Promise<void> {
    await Promise.all([this.kept.filters.close(), this.kept.buckets.close()]);
  }
}
