/** What a RecentMap keeps per value: the map's count when the value last moved to the recent end. */
export interface Recency { moved: number }

/**
 * A Map bounded to `max` entries that forgets the least recently used first, one at a time: a burst of new names
 * evicts the names nobody asked for lately, never everything at once. Map keeps insertion order, so the least recent
 * is the first; a hit moves its entry to the end only when the entry is in the older half (more than max/2 moves
 * ago), so a hot entry costs a hit no write and the order is exact where eviction happens (the older half).
 */
export class RecentMap<V extends Recency> {
  private readonly m = new Map<string, V>();
  private count = 0;
  private readonly half: number;

  constructor(readonly max: number) {
    this.half = Math.max(1, max >>> 1);
  }

  get(k: string): V | undefined {
    const v = this.m.get(k);
    if (v !== undefined && this.count - v.moved > this.half) {
      this.m.delete(k);
      this.m.set(k, v);
      v.moved = ++this.count;
    }
    return v;
  }

  set(k: string, v: V): void {
    this.m.delete(k);
    if (this.max <= 0) return;
    this.m.set(k, v);
    v.moved = ++this.count;
    if (this.m.size > this.max) this.m.delete(this.m.keys().next().value!);
  }

  delete(k: string): void {
    this.m.delete(k);
  }

  clear(): void {
    this.m.clear();
  }

  /** Removes every entry `drop` says to (one pass: for changes, which are rare). */
  sweep(drop: (v: V) => boolean): void {
    for (const [k, v] of this.m) if (drop(v)) this.m.delete(k);
  }

  get size(): number {
    return this.m.size;
  }
}
