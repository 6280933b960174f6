/** Bytes of a record's head: the digest, then the length of its text (u32; its top bit set: not ASCII). */
const DIGEST = 32;
const HEAD = DIGEST + 4;
/** A record's offset in the table is stored plus one, so 0 marks an empty slot: offsets stay below this. */
const MAX_ARENA = 2 ** 32 - 2;
const NOT_ASCII = 0x8000_0000;

/**
 * Texts by the SHA-256 digest of a key's value (32 bytes as a latin1 string: `keyDigest`), a million of them without an object per key: the records (digest,
 * length, text as UTF-8) one after another in one arena of bytes, found through one table of offsets (open
 * addressing, linear probing, at most half full), each slot beside the first four bytes of its record's digest.
 * A lookup reads the slot and its neighbours (one cache line), then the one record whose digest starts the same;
 * a map of strings read a bucket, its entries, and each candidate's key string, all in different places. And the
 * collector has nothing here to mark: the arena and the table are two buffers outside its heap, where a million
 * keys as strings in a map were two million objects marked at every full collection.
 */
export class PackedKeys {
  private arena = Buffer.allocUnsafeSlow(1 << 16);
  private used = 0;
  /** Pairs of (record offset + 1, first four bytes of its digest); 0: empty. */
  private slots = new Uint32Array(2 * 1024);
  private mask = 1024 - 1;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds a record (a digest not there yet: the caller's keys are distinct); false when the arena is full. */
  add(digest: string, text: string): boolean {
    const length = Buffer.byteLength(text, 'utf8');
    if (length >= NOT_ASCII) return false;
    if (this.used + HEAD + length > MAX_ARENA) return false;
    if (this.used + HEAD + length > this.arena.length) this.growArena(this.used + HEAD + length);
    if ((this.count + 1) * 2 > this.mask + 1) this.growSlots();
    const at = this.used;
    this.arena.write(digest, at, DIGEST, 'latin1');
    this.arena.writeUInt32LE((length | (length === text.length ? 0 : NOT_ASCII)) >>> 0, at + DIGEST);
    this.arena.write(text, at + HEAD, length, 'utf8');
    this.used += HEAD + length;
    this.place(at, readHead(digest));
    this.count++;
    return true;
  }

  /** The text of the record with this digest; undefined when there is none. */
  get(digest: string): string | undefined {
    const h = readHead(digest);
    const { slots, mask, arena } = this;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const at = slots[2 * i];
      if (at === 0) return undefined;
      if (slots[2 * i + 1] === h && same(arena, at - 1, digest)) {
        const start = at - 1 + HEAD;
        const length = arena.readUInt32LE(at - 1 + DIGEST);
        // ASCII (nearly every key) decodes as latin1, the cheaper decoder.
        return length & NOT_ASCII ? arena.toString('utf8', start, start + (length & ~NOT_ASCII)) : arena.toString('latin1', start, start + length);
      }
    }
  }

  private place(at: number, h: number): void {
    const { slots, mask } = this;
    let i = h & mask;
    while (slots[2 * i] !== 0) i = (i + 1) & mask;
    slots[2 * i] = at + 1;
    slots[2 * i + 1] = h;
  }

  private growArena(atLeast: number): void {
    let size = this.arena.length * 2;
    while (size < atLeast) size *= 2;
    const arena = Buffer.allocUnsafeSlow(Math.min(size, MAX_ARENA));
    this.arena.copy(arena, 0, 0, this.used);
    this.arena = arena;
  }

  private growSlots(): void {
    const old = this.slots;
    const size = (this.mask + 1) * 2;
    this.slots = new Uint32Array(2 * size);
    this.mask = size - 1;
    for (let i = 0; i < old.length; i += 2) if (old[i] !== 0) this.place(old[i] - 1, old[i + 1]);
  }
}

/** The first four bytes of a digest, as the table's hash and each slot's check. */
const readHead = (d: string) => (d.charCodeAt(0) | (d.charCodeAt(1) << 8) | (d.charCodeAt(2) << 16) | (d.charCodeAt(3) << 24)) >>> 0;

/** Whether the record at `at` has this digest. */
function same(arena: Buffer, at: number, digest: string): boolean {
  for (let i = 0; i < DIGEST; i++) if (arena[at + i] !== digest.charCodeAt(i)) return false;
  return true;
}
