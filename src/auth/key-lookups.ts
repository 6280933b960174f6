import type { KeyContext } from '../store/keys/api-key.ts';
import type { KeyStore } from '../store/keys/key-store.ts';

/** Most hashes one read asks for. */
const MAX_BATCH = 256;

/**
 * The store's lookups of keys not in memory, gathered: the same hash asked again while its lookup runs shares it (32
 * requests of a key seen for the first time make one read, not 32), and the hashes asked in one turn of the event
 * loop go in one read. A flood of keys in use for the first time (a restart, a long tail) then costs the store and
 * this process a read per turn, not a read per key. One hash alone takes the precompiled single lookup.
 */
export class KeyLookups {
  private readonly running = new Map<string, Promise<KeyContext | undefined>>();
  private batch: Map<string, { resolve(c: KeyContext | undefined): void; reject(e: unknown): void }> | undefined;
  /** Hashes asked of the store since start (for /metrics). */
  asked = 0;

  constructor(private readonly store: { keys: KeyStore }) {}

  find(hash: string, now: string): Promise<KeyContext | undefined> {
    const running = this.running.get(hash);
    if (running) return running;
    const p = new Promise<KeyContext | undefined>((resolve, reject) => {
      if (!this.batch) {
        this.batch = new Map();
        setImmediate(() => this.send(now));
      }
      this.batch.set(hash, { resolve, reject });
      if (this.batch.size >= MAX_BATCH) this.send(now);
    });
    this.running.set(hash, p);
    const done = () => { this.running.delete(hash); };
    p.then(done, done);
    return p;
  }

  private send(now: string): void {
    const batch = this.batch;
    if (!batch || batch.size === 0) return;
    this.batch = undefined;
    const hashes = [...batch.keys()];
    this.asked += hashes.length;
    this.store.keys.findKeysByHash(hashes, now).then(
      (found) => { for (const [h, w] of batch) w.resolve(found.get(h)); },
      (err) => { for (const w of batch.values()) w.reject(err); },
    );
  }
}
