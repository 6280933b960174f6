import { MAX_SENT_TRANSACTIONS, type FilterState, type FilterStore } from './filter-store.ts';

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
  /** Per network: transactions sent through this gateway, for pending-transaction filters. */
  private readonly sent = new Map<string, { seq: number; hashes: string[] }>();
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
    this.filters.set(filter.id, { ...structuredClone(filter), version: 0 });
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

  async update(filter: FilterState): Promise<boolean> {
    // Not `live`: a poll that outlasted the idle time (it waited for the node) still saves its filter, whose idle
    // time counts from the poll's answer; a filter removed, or dropped as expired when met, is not in the map.
    const stored = this.filters.get(filter.id);
    if (!stored || stored.version !== filter.version) return false;
    this.filters.set(filter.id, { ...structuredClone(filter), version: stored.version! + 1 });
    return true;
  }

  async remove(id: string): Promise<boolean> {
    const f = this.live(id);
    if (!f) return false;
    this.drop(f);
    return true;
  }

  async noteSent(network: string, hash: string): Promise<void> {
    let n = this.sent.get(network);
    if (!n) this.sent.set(network, (n = { seq: 0, hashes: [] }));
    n.hashes.push(hash);
    n.seq++;
    // Trimmed in halves, not per transaction: no copy of 10,000 entries on each write.
    if (n.hashes.length >= 2 * MAX_SENT_TRANSACTIONS) n.hashes.splice(0, MAX_SENT_TRANSACTIONS);
  }

  async sentSince(network: string, after?: number): Promise<{ seq: number; hashes: string[] }> {
    const n = this.sent.get(network) ?? { seq: 0, hashes: [] };
    if (after === undefined) return { seq: n.seq, hashes: [] };
    const fresh = Math.min(n.seq - (n.seq < after ? 0 : after), n.hashes.length);
    return { seq: n.seq, hashes: fresh > 0 ? n.hashes.slice(n.hashes.length - fresh) : [] };
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
