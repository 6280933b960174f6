import { LRUCache } from 'lru-cache';

/** What a RecentMap keeps per value: the map's count when the value last moved to the recent end. */
export interface Recency { moved: number }

/**
 * A map bounded to `max` entries that forgets the least recently used first, one at a time: a burst of new names
 * evicts the names nobody asked for lately, never everything at once. The order is lru-cache's (a linked list in
 * typed arrays: an eviction is a constant cost; a Map that drops its first entry by iterating from its start pays
 * for every entry deleted before it, 8-75 µs an eviction at 200,000 entries). A hit moves its entry to the recent
 * end only when the entry is in the older half (more than max/2 moves ago): a hot entry costs a hit no write to the
 * list, and the order is exact where eviction happens (the older half).
 */
export class RecentMap<V extends Recency> {
  private readonly m: LRUCache<string, V> | undefined;
  private count = 0;
  private readonly half: number;

  constructor(readonly max: number) {
    this.half = Math.max(1, max >>> 1);
    this.m = max > 0 ? new LRUCache<string, V>({ max }) : undefined;
  }

  get(k: string): V | undefined {
    const m = this.m;
    // Empty (the map of unknown values, nearly always): no lookup, which would hash the value and probe a table.
    if (m === undefined || m.size === 0) return undefined;
    const v = m.peek(k);
    if (v !== undefined && this.count - v.moved > this.half) {
      m.get(k);
      v.moved = ++this.count;
    }
    return v;
  }

  set(k: string, v: V): void {
    if (this.m === undefined) return;
    this.m.set(k, v);
    v.moved = ++this.count;
  }

  delete(k: string): void {
    if (this.m !== undefined && this.m.size > 0) this.m.delete(k);
  }

  clear(): void {
    this.m?.clear();
  }

  /** Calls `f` with every entry (one pass: for changes, which are rare). */
  each(f: (v: V) => void): void {
    this.m?.forEach((v) => f(v));
  }

  /** Removes every entry `drop` says to (one pass: for changes, which are rare). */
  sweep(drop: (v: V) => boolean): void {
    const m = this.m;
    if (m === undefined) return;
    const gone: string[] = [];
    for (const [k, v] of m.entries()) if (drop(v)) gone.push(k);
    for (const k of gone) m.delete(k);
  }

  get size(): number {
    return this.m?.size ?? 0;
  }
}
