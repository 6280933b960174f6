import { LoginBackoff, type BackoffOptions } from './login-backoff/login-backoff.ts';
import type { NodesReport } from './heads/heads-hub.ts';
import { MemoryFilterStore } from './filter-store/memory-filter-store.ts';
import { MemoryRateLimiter } from './rate-limiter/memory-rate-limiter.ts';
import type { PrimaryServer } from './ipc.ts';
import type { SharedStateEvents, SharedStateProtocol } from './protocol.ts';

/** The primary's side of the protocol. */
export type ForWorkers = PrimaryServer<SharedStateProtocol>;
/** Tells every worker but `except` of an event. */
export type Broadcast = (...event: { [T in keyof SharedStateEvents]: [topic: T, data: SharedStateEvents[T], except?: number] }[keyof SharedStateEvents]) => void;

/**
 * What the workers of one machine share, kept in the primary (`--workers N`): what Redis keeps for
 * instances in cluster mode, here in the memory variants one process uses, so that N workers decide exactly as one
 * process would: one bucket per account, one set of filters, one head per network, one login back-off.
 */
export class PrimaryState {
  private readonly limiter = new MemoryRateLimiter();
  private readonly filters: MemoryFilterStore;
  private readonly heads = new Map<string, number>();
  private readonly leases = new Map<string, { worker: number; until: number }>();
  private readonly reports = new Map<string, { report: NodesReport; until: number }>();
  private readonly backoff: LoginBackoff;

  /**
   * `broadcast(topic, data, except)` tells every worker but `except`; `headSeen(key, n)` tells the primary's own
   * chains (the embedded ones, whose journal records each block the workers show). `now` is the filters' clock
   * (tests run the filter store contract on their own).
   */
  constructor(
    server: ForWorkers,
    private readonly broadcast: Broadcast,
    backoff: BackoffOptions,
    private readonly headSeen: (key: string, n: number) => void,
    now?: () => number,
  ) {
    this.backoff = new LoginBackoff(backoff);
    this.filters = new MemoryFilterStore(now);
    const l = this.limiter;
    server.offer('limiter', {
      consume: ([bucket, cost, rate, burst, credit]) => l.consume(bucket, cost, rate, burst, credit),
    });
    const f = this.filters;
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
      publish: ([key, n], worker) => this.publish(key, n, worker, 'up'),
      lower: ([key, n], worker) => this.publish(key, n, worker, 'down'),
      read: ([keys]) => keys.map((k) => this.heads.get(k) ?? null),
      leads: ([key, ttlMs], worker) => {
        const now = Date.now();
        const held = this.leases.get(key);
        if (held && held.worker !== worker && held.until > now) return false;
        this.leases.set(key, { worker, until: now + ttlMs });
        return true;
      },
      report: ([key, report, ttlMs]) => void this.reports.set(key, { report, until: Date.now() + ttlMs }),
      lastReport: ([key]) => {
        const r = this.reports.get(key);
        return r && r.until > Date.now() ? r.report : null;
      },
    });
    const b = this.backoff;
    server.offer('backoff', {
      waitSeconds: ([email, address, now]) => b.waitSeconds(email, address, now),
      failed: ([email, address, now]) => b.failed(email, address, now),
      succeeded: ([email, address]) => b.succeeded(email, address),
    });
  }

  /** Keeps the higher head (or the lower one, when a worker saw the chain go back) and tells the other workers. */
  private publish(key: string, n: number, worker: number, mode: 'up' | 'down'): void {
    const cur = this.heads.get(key) ?? -1;
    if (mode === 'up' ? n <= cur : n >= cur) return;
    this.heads.set(key, n);
    this.broadcast('head', { key, n, mode }, worker);
    if (mode === 'up') this.headSeen(key, n);
  }

  /** A chain restarted from its journal (embedded): its shared head starts again from what it will show. */
  forget(key: string): void {
    this.heads.delete(key);
  }

  async close(): Promise<void> {
    await this.filters.close();
    await this.limiter.close();
  }
}
