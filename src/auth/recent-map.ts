/**
 * What a RecentMap keeps on each value: whether it was asked for since the map's hand last passed it (0 or 1), and
 * its place in the map's ring (set by the map).
 */
export interface Recency { seen: number; slot: number }

/**
 * A map bounded to `max` entries that forgets, one at a time, an entry nobody asked for since the last pass over it
 * (the CLOCK order, an approximation of least recently used): a burst of new names evicts the names nobody asked for
 * lately, never everything at once, and a name asked for again stays. A hit costs the map lookup and, the first time
 * after each pass, one write on the value it returns (already read), so a long tail of names costs a hit no other
 * memory: a linked list of recency (lru-cache's, in typed arrays) touched three more places a hit, each one the
 * processor's caches do not hold when the names are many. An eviction walks the ring from where the last one stopped,
 * clearing the marks it passes: a constant cost on average (a Map that drops its first entry by iterating from its
 * start pays for every entry deleted before it, 8-75 µs an eviction at 200,000 entries).
 */
export class RecentMap<V extends Recency> {
  private readonly m = new Map<string, V>();
  /** The ring: each slot's name and value (undefined: free). */
  private keys: Array<string | undefined> = [];
  private vals: Array<V | undefined> = [];
  private free: number[] = [];
  /** Where the next eviction looks first. */
  private hand = 0;

  constructor(readonly max: number) {}

  get(k: string): V | undefined {
    const m = this.m;
    // Empty (the map of unknown values, nearly always): no lookup, which would hash the value and probe a table.
    if (m.size === 0) return undefined;
    const v = m.get(k);
    if (v !== undefined && v.seen === 0) v.seen = 1;
    return v;
  }

  set(k: string, v: V): void {
    if (this.max <= 0) return;
    const old = this.m.get(k);
    let slot: number;
    if (old !== undefined) slot = old.slot;
    else if (this.free.length > 0) slot = this.free.pop()!;
    else if (this.keys.length < this.max) slot = this.keys.length;
    else slot = this.evict();
    this.keys[slot] = k;
    this.vals[slot] = v;
    v.slot = slot;
    // Not yet asked for: a name seen once goes at the next pass unless it is asked for again.
    v.seen = 0;
    this.m.set(k, v);
  }

  /** Frees the first slot from the hand on whose value was not asked for since the last pass, clearing marks on its way. */
  private evict(): number {
    const { keys, vals } = this;
    for (;;) {
      const slot = this.hand;
      this.hand = slot + 1 === keys.length ? 0 : slot + 1;
      const v = vals[slot]!;
      if (v.seen === 0) {
        this.m.delete(keys[slot]!);
        return slot;
      }
      v.seen = 0;
    }
  }

  delete(k: string): void {
    if (this.m.size === 0) return;
    const v = this.m.get(k);
    if (v === undefined) return;
    this.m.delete(k);
    this.keys[v.slot] = undefined;
    this.vals[v.slot] = undefined;
    this.free.push(v.slot);
  }

  clear(): void {
    this.m.clear();
    this.keys = [];
    this.vals = [];
    this.free = [];
    this.hand = 0;
  }

  /** Calls `f` with every entry (one pass: for changes, which are rare). */
  each(f: (v: V) => void): void {
    this.m.forEach((v) => f(v));
  }

  /** Removes every entry `drop` says to (one pass: for changes, which are rare). */
  sweep(drop: (v: V) => boolean): void {
    const gone: string[] = [];
    for (const [k, v] of this.m) if (drop(v)) gone.push(k);
    for (const k of gone) this.delete(k);
  }

  get size(): number {
    return this.m.size;
  }
}
