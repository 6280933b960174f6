import type { FilterState, FilterStore } from './filter-store.ts';

/**
 * Filters in this process's memory, handed out and taken back as copies, as a shared store does: a poll that fails
 * half-way changed only its own copy, so nothing it did not commit with `update` is lost or half-applied. Expired filters are dropped when met and by a sweep every minute, so a client
 * that makes filters and never polls them holds memory for at most the expiry time.
 */
export class MemoryFilterStore implements FilterStore {
  private readonly filters = new Map<string, FilterState>();
  /** Key id, and account id → ids of their filters, for the limits per key and per account. */
  private readonly byKey = new Map<string, Set<string>>();
  private readonly byAccount = new Map<string, Set<string>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** Live filters, all keys together (for /metrics). */
  get size(): number {
    return this.filters.size;
  }

  async add(filter: FilterState, max: number): Promise<boolean> {
    if (this.count(this.byKey, filter.keyId) >= max || this.count(this.byAccount, filter.accountId) >= max) return false;
    this.filters.set(filter.id, structuredClone(filter));
    index(this.byKey, filter.keyId, filter.id);
    index(this.byAccount, filter.accountId, filter.id);
    return true;
  }

  /** Live filters under `owner` in `by` (expired ones are dropped on the way). */
  private count(by: Map<string, Set<string>>, owner: string): number {
    const ids = by.get(owner);
    if (!ids) return 0;
    for (const id of ids) this.live(id);
    return by.get(owner)?.size ?? 0;
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
    unindex(this.byKey, f.keyId, f.id);
    unindex(this.byAccount, f.accountId, f.id);
  }

  private sweep(): void {
    for (const id of [...this.filters.keys()]) this.live(id);
  }
}

function index(by: Map<string, Set<string>>, owner: string, id: string): void {
  let set = by.get(owner);
  if (!set) by.set(owner, (set = new Set()));
  set.add(id);
}

function unindex(by: Map<string, Set<string>>, owner: string, id: string): void {
  const ids = by.get(owner);
  ids?.delete(id);
  if (ids?.size === 0) by.delete(owner);
}
