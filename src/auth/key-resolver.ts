import { GatewayError } from '../errors/gateway-error.ts';
import { hashKey } from '../accounts/key-value.ts';
import type { KeyRecord, Store } from '../store/store.ts';

/** Shape a key value must have before it is worth hashing: `ngk_` + base62 (anything else is unknown). */
const KEY_SHAPE = /^ngk_[0-9A-Za-z]{20,64}$/;

interface Entry { record: KeyRecord | null; expires: number }

/**
 * Resolves the key of a request to its record. Resolutions are cached in memory so the hot path does not
 * hit the store per request; entries live `ttlMs` so a change made by another process (the CLI, another
 * instance) is seen within that time, and `invalidate()` drops them at once for changes made here.
 */
export class KeyResolver {
  private readonly cache = new Map<string, Entry>();

  constructor(private readonly store: Store, private readonly ttlMs = 1000, private readonly maxEntries = 100_000) {}

  /** Returns the key's record, or throws 401 (-32010) for a missing, malformed, unknown or revoked key. */
  async resolve(value: string | undefined): Promise<KeyRecord> {
    if (!value || !KEY_SHAPE.test(value)) throw new GatewayError('INVALID_KEY');
    const now = Date.now();
    let entry = this.cache.get(value);
    if (!entry || entry.expires < now) {
      const record = (await this.store.findKeyByHash(hashKey(value))) ?? null;
      entry = { record, expires: now + this.ttlMs };
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      this.cache.set(value, entry);
    }
    const record = entry.record;
    if (!record) throw new GatewayError('INVALID_KEY');
    if (record.revokedAt) throw new GatewayError('KEY_REVOKED');
    return record;
  }

  invalidate(): void {
    this.cache.clear();
  }
}
