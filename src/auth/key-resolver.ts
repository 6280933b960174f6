import { isDeepStrictEqual } from 'node:util';
import { hashKey, isKeyValue, keyDigest } from './key-value.ts';
import { JwtChecks, keyJwt, type KeyJwt } from './jwt.ts';
import type { ApiKey, KeyContext } from '../store/keys/api-key.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { bounded } from '../store/bounded.ts';
import { StoreOutage } from '../store/outage.ts';
import { parseAllowlist } from './ip-allowlist.ts';
import { findKeyByHash, type KeyChanges, type KeyStore } from '../store/keys/key-store.ts';
import { KeyChangeFeed } from './key-changes.ts';
import { KeyDirectory, packedRules, unpack, type DirectorySource, type PackedContext } from './key-directory.ts';
import { KeyLookups } from './key-lookups.ts';
import { RecentMap } from './recent-map.ts';
import type { LimitedKey } from '../limits/limits.ts';
import type { UsageHolder } from '../analytics/usage-recorder.ts';
import type { RequestLogHolder } from '../analytics/request-log.ts';

/**
 * A key as the hot path uses it: the records plus its restrictions parsed once, when it enters the cache; and, held
 * while it stays there, its records in the structures each request of it updates (its account's monthly units and
 * bucket name, its usage cells of the minute, its account's explorer share), each found by a lookup once.
 */
export interface ResolvedKey extends KeyContext, LimitedKey, UsageHolder, RequestLogHolder {
  /**
   * What every request reads of the key and its account, on the resolution itself: read there, a key not recently
   * used costs the processor one object it does not hold, not also its key's, account's and permissions' objects.
   */
  keyId: string;
  revoked: boolean;
  suspended: boolean;
  /** The key has the `rpc` permission. */
  rpc: boolean;
  /** A Dedicated key: its calls go to the network's dedicated upstreams. */
  dedicated: boolean;
  ipRanges: ReturnType<typeof parseAllowlist> | undefined;
  origins: ReadonlySet<string> | undefined;
  networks: ReadonlySet<string> | undefined;
  methods: ReadonlySet<string> | undefined;
  denied: ReadonlySet<string> | undefined;
  /** Parts of an allowed User-Agent, lowercase. */
  userAgents: readonly string[] | undefined;
  /** The JWT the key requires, its verifier made once. */
  jwt: KeyJwt | undefined;
  /** Rules on a call's params; undefined when the key has none, so a call pays one test. */
  calls: CallRules | undefined;
  expiresAtMs: number;
  /** The last successful use seen here (ms), and the round of last-use writes it was listed for (`KeyResolver.used`). */
  usedAtMs: number;
  usedRound: number;
  /** The last use last listed for writing, or the store's when resolved (ms; -Infinity: none). */
  listedAtMs: number;
}

/**
 * A key's last use is written at most once per this long: it tells a member whether a key is in use, to the minute,
 * and a key in steady use would otherwise be an update of its row every round (`auth.lastUsedFlushMs`).
 */
export const LAST_USE_GRAIN_MS = 60_000;

/** A key's rules on a call's params (auth/authorize.ts `authorizeCall`). */
export interface CallRules {
  /** Contract addresses, lowercase. */
  contracts: ReadonlySet<string> | undefined;
  /** Blocks one eth_getLogs may span. */
  logsRange: number | undefined;
}

/**
 * A key that exists but is refused (revoked, expired, of a suspended account): the 401, and whose key it is, so the
 * refusal is counted in that key's usage. The caller gets the same answer as for any GatewayError.
 */
export class KnownKeyRefusal extends GatewayError {
  constructor(entry: 'INVALID_KEY' | 'KEY_REVOKED', details: Record<string, unknown>, readonly known: ResolvedKey) {
    super(entry, details);
  }
}

/**
 * What the cache holds for a value, as the store gave it at `fetched` (ms); trusted until `expires`, or while the
 * change feed answers when `followed`, then served only in an outage. `until`: when the value stops working, for a
 * value rotated out (its overlap's end); Infinity for a key's value. `seen`, `slot`: its mark and place in the cache
 * (RecentMap). A key's entry is its resolution itself (`Resolution`: one object a request reads, not two); a value no
 * key has is an entry of its own, `resolved` null.
 */
interface CacheEntry { expires: number; fetched: number; until: number; followed: boolean; seen: number; slot: number }
interface Unknown extends CacheEntry { readonly resolved: null }
type Entry = Resolution | Unknown;

/** How many resolutions are kept, and whether the store's changes are followed (auth.keyCache* in the config). */
export interface KeyCacheSize {
  /** Keys that exist (valid or refused), least recently used forgotten first. */
  entries: number;
  /** Values no key has, apart: a flood of random values evicts only others of its kind. */
  unknownEntries: number;
  /** Follow the store's changes (auth/key-changes.ts): keys in use are not looked up again each ttl. */
  followChanges: boolean;
  /** Keys read into memory at start (auth/key-directory.ts), when changes are followed; 0: none. */
  directoryKeys: number;
}

/** How a resolver behaves when the store does not answer (docs/deployment.md, "When the store is lost"). */
export interface FailStatic {
  /** A key resolved within this long is served as it was while the store is unreachable (0: never). */
  failStaticMs: number;
  /** How long a request waits for the store's answer before being served from memory or refused. */
  storeWaitMs: number;
  /** Where outages are counted and logged (shared with /readyz). */
  outage: StoreOutage;
}

/** While the store is down, at most one lookup is tried per this many ms (the probe that ends the outage). */
const PROBE_MS = 1000;

/**
 * Resolves the key of a request (docs/decisions.md §6). Resolutions are cached in memory so the hot path does not hit
 * the store per request: an entry lives `ttlMs` (the bound on seeing a change made by another instance or the
 * CLI), or, following the store's changes, as long as the feed answers and reports no change to it (the same bound,
 * one read per quarter ttl instead of one per key in use); `invalidate()` drops all at once for changes made here, so a
 * revocation is effective on the next request. The cache is bounded, a key not asked for lately out first (RecentMap). Last-use times (of successful uses: `used()`) are collected here, each key's at most once per LAST_USE_GRAIN_MS, and written in batches by `flushLastUsed()`.
 */
export class KeyResolver {
  private readonly known: RecentMap<Resolution>;
  private readonly unknown: RecentMap<Unknown>;
  private readonly feed: KeyChangeFeed | undefined;
  private readonly lookups: KeyLookups;
  private readonly directory: KeyDirectory | undefined;
  /** Settles when the directory's read at start has ended (at once without a directory). */
  readonly directoryRead: Promise<void> = Promise.resolve();
  /** When this instance last changed keys, accounts or plans itself (`invalidate`). */
  private invalidatedAt = -Infinity;
  /**
   * The keys used since the last write of last uses, each listed once per round (its `usedRound`): a use writes the
   * time on the key itself, so a request costs no lookup here; times become ISO strings only when written.
   */
  private usedKeys: ResolvedKey[] = [];
  private round = 0;
  /** Last uses written since start, a row per key. */
  private lastUsesWritten = 0;
  /** Resolutions taken from the directory since start: keys not in the cache, found without a store read. */
  private directoryReads = 0;
  /** Last uses whose write failed, kept for the next one (a later use of the key, meanwhile, is newer and wins). */
  private unwritten: Map<string, number> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private lastProbe = 0;
  readonly failStatic: FailStatic;
  /** Checks the JWTs of keys that require one: each token verified once (auth/jwt.ts). */
  readonly jwts: JwtChecks;

  constructor(
    private readonly store: { keys: KeyStore } & Partial<DirectorySource>,
    private readonly ttlMs = 1000,
    flushMs = 10_000,
    size: Partial<KeyCacheSize> = {},
    failStatic: Partial<FailStatic> = {},
    private readonly now: () => number = Date.now,
  ) {
    const { entries = 200_000, unknownEntries = 10_000, followChanges = false, directoryKeys = 0 } = size;
    this.known = new RecentMap(entries);
    this.unknown = new RecentMap(unknownEntries);
    this.lookups = new KeyLookups(store);
    this.failStatic = { failStaticMs: 900_000, storeWaitMs: 1000, outage: new StoreOutage(undefined, now), ...failStatic };
    if (followChanges && ttlMs > 0) {
      // The feed's answer is the store's: it ends an outage, which keys trusted on the feed's word would not probe.
      const { outage } = this.failStatic;
      this.feed = new KeyChangeFeed(store, ttlMs, (c) => this.drop(c), now, () => outage.answered(), (ids) => this.revokedNow(ids));
      this.feed.start();
      const { accounts, plans } = store;
      if (directoryKeys > 0 && accounts && plans) {
        // Read after the feed's first look: what that look reports (the last seconds' changes) is then in what is read,
        // and every change reported later is newer than the read. A failed read leaves the directory as far as it got:
        // a key not in it is looked up, as without one.
        const directory = new KeyDirectory({ keys: store.keys, accounts, plans }, directoryKeys);
        this.directory = directory;
        this.directoryRead = this.feed.look().catch(() => {}).then(() => directory.load()).catch(() => {});
      }
    }
    this.jwts = new JwtChecks(now);
    if (flushMs > 0) {
      this.timer = setInterval(() => void this.flushLastUsed().catch(() => {}), flushMs);
      this.timer.unref();
    }
  }

  /**
   * The key's context, or 401 (-32010): missing, malformed, unknown, expired, revoked, or of a suspended account.
   * The reason goes in `data.detail`, never the key. Thrown at once when decided at once (a malformed key, a key in
   * memory), else a rejection.
   */
  resolve(value: string | undefined): ResolvedKey | Promise<ResolvedKey> {
    // Only well-formed keys are ever kept, so one found is well formed: the shape is tested on a miss only (the
    // regular expression was 1 % of a cache hit's instructions, bench/instructions.ts).
    const entry = value ? this.known.get(value) ?? this.unknown.get(value) : undefined;
    if (!entry && (!value || !isKeyValue(value))) throw new GatewayError(value ? 'INVALID_KEY' : 'KEY_MISSING');
    const now = this.now();
    // A key known and fresh is decided at once (no promise: every request passes here); else once the store answers.
    if (!entry || (entry.followed ? this.feed!.trustedUntil : entry.expires) < now) {
      const found = this.fromDirectory(value!, entry, now);
      if (found) return this.usable(found, now);
      return this.refresh(value!, entry, now).then((e) => this.usable(e, now));
    }
    return this.usable(entry, now);
  }

  /**
   * The key as the directory holds it, while the feed answers and has looked since this instance's own last change
   * (`invalidate`: until the feed reports it, the directory may hold what the change replaced); else undefined.
   */
  private fromDirectory(value: string, stale: Entry | undefined, now: number): Entry | undefined {
    const { directory, feed } = this;
    if (!directory || now > feed!.trustedUntil || feed!.seenAt <= this.invalidatedAt) return undefined;
    const ctx = directory.get(keyDigest(value));
    if (!ctx) return undefined;
    this.directoryReads++;
    // Found by the hash of its value: the key's own (the directory holds no value rotated out).
    return this.put(value, 'packed' in ctx ? ctx.hash : ctx.key.hash, ctx, now, stale, feed!.generation);
  }

  private usable(entry: Entry, now: number): ResolvedKey {
    const r = entry.resolved;
    if (!r) throw new GatewayError('INVALID_KEY');
    if (r.revoked) throw new KnownKeyRefusal('KEY_REVOKED', {}, r);
    // A value rotated out stops at its overlap's end on every instance by the clock, whatever the cache holds.
    if (r.expiresAtMs <= now || entry.until <= now) {
      throw new KnownKeyRefusal('INVALID_KEY', { detail: entry.until <= now ? 'the key was rotated: this value no longer works' : 'the key has expired' }, r);
    }
    if (r.suspended) throw new KnownKeyRefusal('INVALID_KEY', { detail: 'the account is suspended' }, r);
    return r;
  }

  /**
   * The key was used with success (its last use moves on success only, not when a request is refused
   * by its allowlists or limits): noted here, written in the next batch.
   */
  used(key: ResolvedKey): void {
    const now = this.now();
    key.usedAtMs = now;
    if (key.usedRound !== this.round && now - key.listedAtMs >= LAST_USE_GRAIN_MS) {
      key.usedRound = this.round;
      key.listedAtMs = now;
      this.usedKeys.push(key);
    }
  }

  /**
   * Asks the store again for a key whose resolution is missing or past its ttl. A store that fails or does not
   * answer within `storeWaitMs` opens an outage: from then on no request waits for it; a key resolved within
   * `failStaticMs` is served as it was (fail static: its plan, allowlists and revocation as last known), any other
   * gets 503 store_unavailable, and one lookup per second in the background finds out when the store is back.
   */
  private async refresh(value: string, stale: Entry | undefined, now: number): Promise<Entry> {
    const { outage, failStaticMs, storeWaitMs } = this.failStatic;
    // A followed entry was confirmed by every look of the feed since it was fetched.
    const confirmed = stale && (stale.followed ? Math.max(stale.fetched, this.feed!.seenAt) : stale.fetched);
    const usable = stale !== undefined && now - confirmed! <= failStaticMs;
    if (outage.down) {
      this.probe(value);
      return this.fromMemory(usable ? stale : undefined);
    }
    try {
      const hash = hashKey(value);
      const generation = this.feed?.generation;
      const ctx = await bounded(this.lookups.find(hash, new Date(now).toISOString()), storeWaitMs);
      outage.answered();
      return this.put(value, hash, ctx, now, stale, generation);
    } catch (err) {
      outage.failed(err);
      return this.fromMemory(usable ? stale : undefined);
    }
  }

  private fromMemory(stale: Entry | undefined): Entry {
    const { outage } = this.failStatic;
    if (!stale) {
      outage.refused();
      throw new GatewayError('STORE_UNAVAILABLE');
    }
    outage.servedFromMemory();
    return stale;
  }

  /**
   * `stale`'s resolution is kept when the store says the same of the key as it did (the common case: an entry is
   * fetched again every ttlMs while in use): the hot path then sees the same objects for as long as the key stays as
   * it is. Objects made anew every second each cost V8 a round of deoptimising and recompiling every function of the
   * request's path that reads them (seen under load as a round of bailouts a second for the first 15-25 s), and the
   * per-account caches keyed by them (limits' bucket names) were made again.
   */
  private put(value: string, hash: string, ctx: KeyContext | PackedContext | null | undefined, now: number, stale?: Entry, generation?: number): Entry {
    const kept = stale?.resolved && ctx && sameContext(stale.resolved, ctx) ? stale.resolved : undefined;
    // Found by its previous hash: the value was rotated out, and works until the overlap ends (a packed key has none).
    const until = ctx && !('packed' in ctx) && ctx.key.hash !== hash && ctx.key.previousUntil ? Date.parse(ctx.key.previousUntil) : Infinity;
    // Followed: the feed answers, and reported no change while the store was read (else the read may predate it).
    const feed = this.feed;
    const followed = Boolean(ctx) && feed !== undefined && generation === feed.generation && this.now() <= feed.trustedUntil;
    const resolved = kept ?? (ctx ? prepare(ctx) : null);
    const entry: Entry = resolved ?? { resolved: null, expires: 0, fetched: 0, until: Infinity, followed: false, seen: 0, slot: -1 };
    entry.expires = now + this.ttlMs;
    entry.fetched = now;
    entry.until = until;
    entry.followed = followed;
    // Values no key has are kept apart, so a flood of them cannot evict the keys in use.
    if (resolved) {
      this.unknown.delete(value);
      this.known.set(value, resolved);
    } else {
      this.known.delete(value);
      this.unknown.set(value, entry as Unknown);
    }
    return entry;
  }

  /** The store reported changes: the resolutions they touch go, and are looked up on their next use. */
  private drop(c: KeyChanges): void {
    const ids = (cs: Array<{ id: string }>) => new Set(cs.map((x) => x.id));
    const keys = ids(c.keys);
    const accounts = ids(c.accounts);
    const plans = ids(c.plans);
    this.directory?.forget(c);
    this.known.sweep((r) => keys.has(r.keyId) || accounts.has(r.account.id) || plans.has(r.plan.id));
  }

  /**
   * The store said, as they committed, that these keys were revoked (a revocation is for ever): their resolutions are
   * refused from the next request on, with no read of the store (which may be short of CPU under load), and the keys
   * read ahead are not used for them. The look that follows reports them and takes them out.
   */
  private revokedNow(ids: ReadonlySet<string>): void {
    this.directory?.forget({ keys: [...ids].map((id) => ({ id, at: '' })), accounts: [], plans: [] });
    this.known.each((r) => { if (ids.has(r.keyId)) r.revoked = true; });
  }

  /**
   * Resolutions held in memory (keys that exist), keys read ahead, keys asked of the store since start, and last uses
   * written since start: for /metrics.
   */
  get stats(): { held: number; readAhead: number; directoryReads: number; lookups: number; lastUsesWritten: number } {
    return { held: this.known.size, readAhead: this.directory?.size ?? 0, directoryReads: this.directoryReads, lookups: this.lookups.asked, lastUsesWritten: this.lastUsesWritten };
  }

  /** Asks the store for its changes now (the feed does every quarter ttl): resolves once they are applied. */
  followChanges(): Promise<void> {
    return this.feed ? this.feed.look() : Promise.resolve();
  }

  /** During an outage: one lookup in the background at a time, one per second; its answer ends the outage. */
  private probe(value: string): void {
    const now = this.now();
    if (this.probing || now - this.lastProbe < PROBE_MS) return;
    this.probing = true;
    this.lastProbe = now;
    const { outage, storeWaitMs } = this.failStatic;
    const hash = hashKey(value);
    const generation = this.feed?.generation;
    bounded(findKeyByHash(this.store.keys, hash, new Date(now).toISOString()), storeWaitMs).then(
      (ctx) => {
        outage.answered();
        this.put(value, hash, ctx, this.now(), undefined, generation);
      },
      (err) => outage.failed(err),
    ).finally(() => { this.probing = false; });
  }

  /** Drops every cached resolution: called on every change to accounts, plans or keys. */
  invalidate(): void {
    this.invalidatedAt = this.now();
    this.known.clear();
    this.unknown.clear();
  }

  async flushLastUsed(): Promise<void> {
    if (this.usedKeys.length === 0 && !this.unwritten) return;
    // By id: a key whose records changed is listed once per object it was used through; the latest use counts.
    const latest = this.unwritten ?? new Map<string, number>();
    this.unwritten = undefined;
    const listed = this.usedKeys;
    for (const k of listed) if (!(latest.get(k.keyId)! >= k.usedAtMs)) latest.set(k.keyId, k.usedAtMs);
    this.usedKeys = [];
    this.round++;
    const batch = new Map<string, string>();
    for (const [id, ms] of latest) batch.set(id, new Date(ms).toISOString());
    try {
      await this.store.keys.touchKeys(batch);
      this.lastUsesWritten += batch.size;
    } catch (err) {
      this.unwritten = latest;
      // Nothing of the batch is written: the keys' next uses are listed again, whatever the grain.
      for (const k of listed) k.listedAtMs = -Infinity;
      throw err;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.feed?.stop();
    this.directory?.stop();
    await this.flushLastUsed().catch(() => {});
  }
}

/** The store says the same of the key as `held` was made of; its last use aside (written here, read nowhere on the path). */
function sameContext(held: ResolvedKey, ctx: KeyContext | PackedContext): boolean {
  const key = 'packed' in ctx ? unpack(ctx.packed, ctx.hash) : ctx.key;
  return isDeepStrictEqual(held.plan, ctx.plan) && isDeepStrictEqual(held.account, ctx.account)
    && isDeepStrictEqual({ ...held.key, lastUsedAt: null }, { ...key, lastUsedAt: null });
}

/**
 * A resolution, and its entry in the cache: what every request reads first, in the order it reads it (the fields a
 * request of a key the processor's caches do not hold reads are then a line or two of memory), then the records it
 * holds. A key read ahead packed (no rules) keeps its packed text and is made whole only when something reads `key` (a
 * refusal, a filter, the API): a resolution of the long tail is one object and one string.
 */
class Resolution implements CacheEntry {
  seen = 0;
  slot = -1;
  followed = false;
  expires = 0;
  revoked = false;
  suspended: boolean;
  rpc: boolean;
  dedicated: boolean;
  expiresAtMs: number;
  until = Infinity;
  ipRanges: ReturnType<typeof parseAllowlist> | undefined = undefined;
  origins: ReadonlySet<string> | undefined = undefined;
  networks: ReadonlySet<string> | undefined = undefined;
  methods: ReadonlySet<string> | undefined = undefined;
  denied: ReadonlySet<string> | undefined = undefined;
  userAgents: readonly string[] | undefined = undefined;
  jwt: KeyJwt | undefined = undefined;
  calls: CallRules | undefined = undefined;
  quotaUnits: number | undefined = undefined;
  bucketName: string | undefined = undefined;
  rateBucket: number | undefined = undefined;
  rateSerial = 0;
  usageEpoch = -1;
  usageCells: unknown = undefined;
  usageCell: unknown = undefined;
  usageAccount: unknown = undefined;
  logAccount: unknown = undefined;
  usedAtMs = 0;
  usedRound = -1;
  listedAtMs: number;
  fetched = 0;
  readonly keyId: string;
  readonly accountId: string;
  readonly account: KeyContext['account'];
  readonly plan: KeyContext['plan'];
  private whole: ApiKey | undefined;
  private readonly packed: string | undefined;
  private readonly hash: string | undefined;

  constructor(keyId: string, account: KeyContext['account'], plan: KeyContext['plan'], dedicated: boolean, rpc: boolean, expiresAtMs: number, listedAtMs: number, whole: ApiKey | undefined, packed?: string, hash?: string) {
    this.keyId = keyId;
    this.accountId = account.id;
    this.account = account;
    this.plan = plan;
    this.suspended = account.status !== 'active';
    this.rpc = rpc;
    this.dedicated = dedicated;
    this.expiresAtMs = expiresAtMs;
    this.listedAtMs = listedAtMs;
    this.whole = whole;
    this.packed = packed;
    this.hash = hash;
  }

  get key(): ApiKey {
    return (this.whole ??= unpack(this.packed!, this.hash!));
  }

  /** As an entry of the cache: the resolution is itself. */
  get resolved(): Resolution {
    return this;
  }
}

/** A key's rules in the forms the hot path tests them in, made once: a rule the key does not have is undefined. */
function prepare(ctx: KeyContext | PackedContext): Resolution {
  if ('packed' in ctx) {
    const p = packedRules(ctx.packed);
    return new Resolution(p.id, ctx.account, ctx.plan, p.dedicated, p.rpc, p.expiresAtMs, p.lastUsedAtMs, undefined, ctx.packed, ctx.hash);
  }
  const k = ctx.key;
  const r = new Resolution(k.id, ctx.account, ctx.plan, k.type === 'Dedicated', k.permissions.includes('rpc'), k.expiresAt ? Date.parse(k.expiresAt) : Infinity, k.lastUsedAt ? Date.parse(k.lastUsedAt) : -Infinity, k);
  const set = (l: string[]) => (l.length ? new Set(l) : undefined);
  const contracts = set(k.contractAllowlist);
  const logsRange = k.logsMaxBlockRange ?? undefined;
  r.revoked = Boolean(k.revokedAt);
  r.ipRanges = k.ipAllowlist.length ? parseAllowlist(k.ipAllowlist) : undefined;
  r.origins = set(k.originAllowlist);
  r.networks = set(k.networkAllowlist);
  r.methods = set(k.methodAllowlist);
  r.denied = set(k.methodDenylist);
  r.userAgents = k.userAgentAllowlist.length ? k.userAgentAllowlist.map((u) => u.toLowerCase()) : undefined;
  r.jwt = keyJwt(k.jwtKeys, k.jwtAudiences);
  r.calls = contracts || logsRange !== undefined ? { contracts, logsRange } : undefined;
  return r;
}
