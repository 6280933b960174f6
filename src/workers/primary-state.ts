import { LoginBackoff, type BackoffOptions } from '../api/login-backoff.ts';
import type { NodesReport } from '../chain/cluster-head.ts';
import type { FilterState } from '../filters/filter-store.ts';
import { MemoryFilterStore } from '../filters/memory-filter-store.ts';
import { MemoryRateLimiter } from '../limits/memory-rate-limiter.ts';
import type { PrimaryServer } from './ipc.ts';

/**
 * What the workers of one machine share, kept in the primary (`--workers N`): what Redis keeps for
 * instances in cluster mode, here in the memory variants one process uses, so that N workers decide exactly as one
 * process would: one bucket per account, one set of filters, one head per network, one login back-off.
 */
export class PrimaryState {
  private readonly limiter = new MemoryRateLimiter();
  private readonly filters = new MemoryFilterStore();
  private readonly heads = new Map<string, number>();
  private readonly leases = new Map<string, { worker: number; until: number }>();
  private readonly reports = new Map<string, { report: NodesReport; until: number }>();
  private readonly backoff: LoginBackoff;

  /**
   * `broadcast(topic, data, except)` tells every worker but `except`; `headSeen(key, n)` tells the primary's own
   * chains (the embedded ones, whose journal records each block the workers show).
   */
  constructor(
    server: PrimaryServer,
    private readonly broadcast: (topic: string, data: unknown, except?: number) => void,
    backoff: BackoffOptions,
    private readonly headSeen: (key: string, n: number) => void,
  ) {
    this.backoff = new LoginBackoff(backoff);
    const l = this.limiter;
    server.offer('limiter', {
      consume: ([bucket, cost, rate, burst, credit]) => l.consume(bucket as string, cost as number, rate as number, burst as number, credit as number | undefined),
    });
    const f = this.filters;
    server.offer('filters', {
      add: ([filter, max]) => f.add(filter as FilterState, max as number),
      get: ([id]) => f.get(id as string),
      update: ([filter]) => f.update(filter as FilterState),
      remove: ([id]) => f.remove(id as string),
      noteSent: ([network, hash]) => f.noteSent(network as string, hash as string),
      sentSince: ([network, after]) => f.sentSince(network as string, after as number | undefined),
      size: () => f.size,
    });
    server.offer('heads', {
      publish: ([key, n], worker) => this.publish(key as string, n as number, worker, 'up'),
      lower: ([key, n], worker) => this.publish(key as string, n as number, worker, 'down'),
      read: ([keys]) => (keys as string[]).map((k) => this.heads.get(k) ?? null),
      leads: ([key, ttlMs], worker) => {
        const now = Date.now();
        const held = this.leases.get(key as string);
        if (held && held.worker !== worker && held.until > now) return false;
        this.leases.set(key as string, { worker, until: now + (ttlMs as number) });
        return true;
      },
      report: ([key, report, ttlMs]) => void this.reports.set(key as string, { report: report as NodesReport, until: Date.now() + (ttlMs as number) }),
      lastReport: ([key]) => {
        const r = this.reports.get(key as string);
        return r && r.until > Date.now() ? r.report : null;
      },
    });
    const b = this.backoff;
    server.offer('backoff', {
      waitSeconds: ([email, address, now]) => b.waitSeconds(email as string, address as string, now as number),
      failed: ([email, address, now]) => b.failed(email as string, address as string, now as number),
      succeeded: ([email, address]) => b.succeeded(email as string, address as string),
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
