import type { MemoryLeases } from '../leases/memory-leases.ts';
import { checksLease, headKey, type HeadsHub, type NodesReport } from './heads-hub.ts';

/** Told of every head that moved: by whom (`from`), up or down. */
export type HeadMoved = (key: string, n: number, mode: 'up' | 'down', from: string) => void;

/**
 * Each network's shared head in this process's memory, by head key: the table the workers' primary keeps for them
 * (its IPC handlers call these methods, each worker a holder named by the primary). `hub(holder)` is one process's
 * view of it, as a worker's is over IPC: the heads contract runs on it.
 */
export class MemoryHeads {
  private readonly heads = new Map<string, number>();
  private readonly reports = new Map<string, { report: NodesReport; until: number }>();
  private readonly moved: HeadMoved[] = [];

  /** `leases`: the table of the node checks' leases (`checks:{key}`). */
  constructor(private readonly leases: MemoryLeases, private readonly now: () => number = Date.now) {}

  /** Keeps the higher head (or the lower one, when a process saw the chain go back) and says so to the listeners. */
  publish(key: string, n: number, mode: 'up' | 'down', from: string): void {
    const cur = this.heads.get(key) ?? -1;
    if (mode === 'up' ? n <= cur : n >= cur) return;
    this.heads.set(key, n);
    for (const fn of this.moved) fn(key, n, mode, from);
  }

  /** The heads of `keys`, in order; null where none is known. */
  read(keys: readonly string[]): Array<number | null> {
    return keys.map((k) => this.heads.get(k) ?? null);
  }

  report(key: string, report: NodesReport, ttlMs: number): void {
    this.reports.set(key, { report, until: this.now() + ttlMs });
  }

  lastReport(key: string): NodesReport | null {
    const r = this.reports.get(key);
    return r && r.until > this.now() ? r.report : null;
  }

  /** A chain restarted from its journal (embedded): its shared head starts again from what it will show. */
  forget(key: string): void {
    this.heads.delete(key);
  }

  /** Hears every head that moves. */
  listen(fn: HeadMoved): void {
    this.moved.push(fn);
  }

  /** One process's view, as `holder`: told of the heads the others publish. */
  hub(holder: string): HeadsHub {
    const followers = new Map<string, (n: number) => void>();
    this.listen((key, n, mode, from) => {
      if (mode === 'up' && from !== holder) followers.get(key)?.(n);
    });
    return {
      embeddedToo: true,
      network: (chainId, upstreams, follow) => {
        const key = headKey(chainId, upstreams);
        followers.set(key, follow);
        return {
          publish: async (n) => this.publish(key, n, 'up', holder),
          lower: async (n) => this.publish(key, n, 'down', holder),
          read: async () => this.heads.get(key),
          leads: async (ttlMs) => this.leases.take(checksLease(key), ttlMs, holder),
          report: async (report, ttlMs) => this.report(key, report, ttlMs),
          lastReport: async () => this.lastReport(key) ?? undefined,
        };
      },
      close: async () => {},
    };
  }
}
