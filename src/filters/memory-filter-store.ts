import type { FilterState, FilterStore } from './filter-store.ts';

/**
 * Filters in this process's memory, handed out and taken back as copies, as a shared store does: a poll that fails
 * half-way changed only its own copy, so nothing it did not commit with `update` is lost or half-applied. Expired filters are dropped when met and by a sweep every minute, so a client
 * that makes filters and never polls them holds memory for at most the expiry time.
 */
export class MemoryFilterStore implements FilterStore {
  private readonly filters = new Map<string, FilterState>();
  /** Key id → ids of its filters, for the per-key limit. */
  private readonly byKey = new Map<string, Set<string>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  async add(filter: FilterState, maxPerKey: number): Promise<boolean> {
    const ids = this.byKey.get(filter.keyId);
    if (ids) {
      for (const id of ids) this.live(id);
      if (ids.size >= maxPerKey) return false;
    } else if (maxPerKey < 1) {
      return false;
    }
    this.filters.set(filter.id, structuredClone(filter));
    let set = this.byKey.get(filter.keyId);
    if (!set) this.byKey.set(filter.keyId, (set = new Set()));
    set.add(filter.id);
    return true;
  }

  async get(id: string): Promise<FilterState | undefined> {
    const f = this.live(id);
    return f && structuredClone(f);
  }

  async update(filter: FilterState): Promise<void> {
    if (this.filters.has(filter.id)) this.filters.set(filter.id, structuredClone(filter));
  }

  async remove(id: string): Promise<boolean> {
    const f = this.live(id);
    if (!f) return false;
    this.drop(f);
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  private live(id: string): FilterState | undefined {
    const f = this.filters.get(id);
    if (f && f.expiresAt <= this.now()) {
      this.drop(f);
      return undefined;
    }
    return f;
  }

  private drop(f: FilterState): void {
    this.filters.delete(f.id);
    const ids = this.byKey.get(f.keyId);
    ids?.delete(f.id);
    if (ids?.size === 0) this.byKey.delete(f.keyId);
  }

  private sweep(): void {
    for (const id of [...this.filters.keys()]) this.live(id);
  }
}
