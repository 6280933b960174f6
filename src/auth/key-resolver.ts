import { hashKey } from './key-value.ts';
import type { KeyContext } from '../store/model.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Store } from '../store/store.ts';
import { parseAllowlist } from './ip-allowlist.ts';

/** Shape a key value must have before it is worth hashing: `ngk_` + base62 (anything else is unknown). */
const KEY_SHAPE = /^ngk_[0-9A-Za-z]{20,64}$/;

/** A key as the hot path uses it: the records plus its restrictions parsed once, when it enters the cache. */
export interface ResolvedKey extends KeyContext {
  ipRanges: ReturnType<typeof parseAllowlist> | undefined;
  origins: ReadonlySet<string> | undefined;
  networks: ReadonlySet<string> | undefined;
  methods: ReadonlySet<string> | undefined;
  expiresAtMs: number;
}

interface Entry { resolved: ResolvedKey | null; expires: number }

/**
 * Resolves the key of a request (docs/decisions.md §6). Resolutions are cached in memory so the hot path does not hit
 * the store per request: an entry lives `ttlMs` (the bound on seeing a change made by another instance or the
 * CLI), and `invalidate()` drops all at once for changes made here, so a revocation is effective on the next
 * request. Last-use times are collected here and written in batches by `flushLastUsed()`.
 */
export class KeyResolver {
  private readonly cache = new Map<string, Entry>();
  /** Key id → last use, ms; turned into ISO strings only when flushed. */
  private readonly lastUsed = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly store: Store, private readonly ttlMs = 1000, flushMs = 10_000, private readonly maxEntries = 100_000) {
    if (flushMs > 0) {
      this.timer = setInterval(() => void this.flushLastUsed().catch(() => {}), flushMs);
      this.timer.unref();
    }
  }

  /**
   * The key's context, or 401 (-32010): missing, malformed, unknown, expired, revoked, or of a suspended account.
   * The reason goes in `data.detail`, never the key.
   */
  async resolve(value: string | undefined): Promise<ResolvedKey> {
    if (!value || !KEY_SHAPE.test(value)) throw new GatewayError('INVALID_KEY');
    const now = Date.now();
    let entry = this.cache.get(value);
    if (!entry || entry.expires < now) {
      const ctx = await this.store.findKeyByHash(hashKey(value));
      entry = { resolved: ctx ? prepare(ctx) : null, expires: now + this.ttlMs };
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      this.cache.set(value, entry);
    }
    const r = entry.resolved;
    if (!r) throw new GatewayError('INVALID_KEY');
    if (r.key.revokedAt) throw new GatewayError('KEY_REVOKED');
    if (r.expiresAtMs <= now) throw new GatewayError('INVALID_KEY', { detail: 'the key has expired' });
    if (r.account.status !== 'active') throw new GatewayError('INVALID_KEY', { detail: 'the account is suspended' });
    this.lastUsed.set(r.key.id, now);
    return r;
  }

  /** Drops every cached resolution: called on every change to accounts, plans or keys. */
  invalidate(): void {
    this.cache.clear();
  }

  async flushLastUsed(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const batch = new Map<string, string>();
    for (const [id, ms] of this.lastUsed) batch.set(id, new Date(ms).toISOString());
    this.lastUsed.clear();
    await this.store.touchKeys(batch);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushLastUsed().catch(() => {});
  }
}

function prepare(ctx: KeyContext): ResolvedKey {
  const k = ctx.key;
  const set = (l: string[]) => (l.length ? new Set(l) : undefined);
  return {
    ...ctx,
    ipRanges: k.ipAllowlist.length ? parseAllowlist(k.ipAllowlist) : undefined,
    origins: set(k.originAllowlist),
    networks: set(k.networkAllowlist),
    methods: set(k.methodAllowlist),
    expiresAtMs: k.expiresAt ? Date.parse(k.expiresAt) : Infinity,
  };
}
