import { LRUCache } from 'lru-cache';
import { CallAborted } from '../errors/call-aborted.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import type { ChainHead } from '../chain/chain-head.ts';
import { CACHE_POLICIES, type CachePolicy } from './cache-policy.ts';
import { headSlotKey, type SharedSlot, type SharedTier } from './shared-tier.ts';

/**
 * A kept answer, with the account whose call filled the entry: `X-Cache` says HIT only to that account. A shared
 * cache answers every account from what any of them asked; the header must not confirm to one account what another
 * just called. Made when the entry is filled (a miss), so a hit reads one property of the same shape every time.
 */
export interface CachedAnswer {
  result: unknown;
  error?: undefined;
  raw?: string;
  filledBy: string;
}

const sizeOf = (answer: CachedAnswer, key: string) =>
  key.length + (answer.raw?.length ?? JSON.stringify(answer.result ?? null).length) + 64;

const newLru = (maxBytes: number) => new LRUCache<string, CachedAnswer>({ maxSize: Math.max(1, maxBytes), sizeCalculation: sizeOf });

/**
 * The answers of every network, in memory, bounded in bytes (least recently used go first): answers that hold for
 * ever in one store shared by the networks (three quarters of `cache.maxBytes`), answers tied to the head in one
 * store per network (the rest, shared out), emptied whenever that network's head moves, so that what a block made
 * stale never takes the place of what still holds.
 */
export class ResponseCache {
  private readonly final: LRUCache<string, CachedAnswer>;

  constructor(private readonly maxBytes: number, private readonly networks: number) {
    this.final = newLru(Math.floor(maxBytes * 0.75));
  }

  get(key: string): CachedAnswer | undefined {
    return this.final.get(key);
  }

  set(key: string, answer: CachedAnswer): void {
    this.final.set(key, answer);
  }

  /** Drops every answer whose key starts with `prefix` (one network's, when its chain was replaced). */
  drop(prefix: string): void {
    for (const key of [...this.final.keys()]) if (key.startsWith(prefix)) this.final.delete(key);
  }

  /** A store for one network's answers tied to its head. */
  headStore(): LRUCache<string, CachedAnswer> {
    return newLru(Math.floor((this.maxBytes * 0.25) / Math.max(1, this.networks)));
  }
}

/** Where a call's answer is kept (`NetworkCache.lookup`): its keys, the head epoch they are of, and what was found. */
export interface CacheLookup {
  policy: CachePolicy;
  epoch: number;
  key: string;
  atHeadKey: string;
  hit: CachedAnswer | undefined;
}

/**
 * What the cache stage did with a call: HIT from an entry the caller's own account filled, SHARED_HIT from one
 * another account filled (a hit for the metrics; `X-Cache: MISS` to the caller, as it would be had that account not
 * asked: `cacheHeader`), MISS.
 */
export type CacheOutcome = 'HIT' | 'SHARED_HIT' | 'MISS';

/** The `X-Cache` value of an outcome: the caller is told HIT only of entries its own account filled. */
export const cacheHeader = (o: CacheOutcome): 'HIT' | 'MISS' => (o === 'HIT' ? 'HIT' : 'MISS');

/** A hit's outcome for the account `accountId`. */
export const hitFor = (hit: CachedAnswer, accountId: string): CacheOutcome => (hit.filledBy === accountId ? 'HIT' : 'SHARED_HIT');

/** Who a call is, to the cache: the account its key belongs to, and its deadline (rpc/deadline.ts). */
interface Caller {
  cache?: CacheOutcome;
  key: { account: { id: string } };
  signal?: object;
}

/**
 * The cache stage of one network (docs/pipeline.md): a lookup before the call, one upstream call for identical
 * calls in flight at once (coalescing), and the answer kept for as long as its method's policy says. Errors are
 * never kept. Answers tied to `latest` are kept only if the head did not move while they were being fetched.
 *
 * Keys name the chain, not this process: an answer that holds for ever is keyed by network, method and params; one
 * tied to the head also by the head's block number, so that a store shared by several instances could hold both.
 * When the chain goes back or is replaced (the chain module's `reorg` and `reset` events), the network's answers
 * are dropped (`dropAll`).
 */
export class NetworkCache {
  private readonly inflight = new Map<string, Promise<UpstreamAnswer>>();
  private readonly final = (n: number) => this.head.final(n);
  /** Answers of the head epoch `headEpoch`; emptied when the epoch moves on. */
  private readonly atHead: LRUCache<string, CachedAnswer>;
  private headEpoch = -1;
  private readonly withoutParams = new Map<string, { key: string; head: number | undefined; atHeadKey: string }>();

  /** `tier`: the shared tier behind this memory cache (cache.shared), asked on a miss only. */
  constructor(private readonly network: string, private readonly store: ResponseCache, readonly head: ChainHead, readonly tier?: SharedTier) {
    this.atHead = store.headStore();
  }

  /** The chain went back or was replaced: nothing cached of this network holds (the chain module's events). */
  dropAll(): void {
    this.store.drop(`${this.network}\u0000`);
    this.atHead.clear();
    this.headEpoch = -1;
  }

  /** The head store, for `epoch`: what an earlier epoch left is dropped first. */
  private headFor(epoch: number): LRUCache<string, CachedAnswer> {
    if (epoch !== this.headEpoch) {
      this.atHead.clear();
      this.headEpoch = epoch;
    }
    return this.atHead;
  }

  /**
   * Where `method(params)` is kept, and what is kept there, looked up at once (no promise): undefined when its
   * method's policy never keeps it. The pipeline answers a hit before any stage runs (rpc/pipeline.ts
   * `atOnce`) and hands a miss's lookup to `run`, so a call is looked up once.
   */
  lookup(method: string, params: unknown[]): CacheLookup | undefined {
    const policy: CachePolicy | undefined = CACHE_POLICIES[method];
    if (!policy || policy(params, undefined, this.final) === 'never') return undefined;
    const epoch = this.head.epoch;
    if (params.length === 0) {
      const k = this.keysWithoutParams(method);
      return { policy, epoch, key: k.key, atHeadKey: k.atHeadKey, hit: this.store.get(k.key) ?? this.headFor(epoch).get(k.atHeadKey) };
    }
    const key = `${this.network}\u0000${method}\u0000${JSON.stringify(params)}`;
    const atHeadKey = `${key}\u0000@${this.head.number ?? '?'}`;
    return { policy, epoch, key, atHeadKey, hit: this.store.get(key) ?? this.headFor(epoch).get(atHeadKey) };
  }

  /**
   * The keys of a call without params (eth_blockNumber, eth_chainId, eth_gasPrice: the most frequent hits), made
   * once per method and once per head: the same strings each time, whose hashes V8 keeps, instead of two strings
   * built, flattened and hashed per call. One entry per method of the table that has a cache policy.
   */
  private keysWithoutParams(method: string): { key: string; head: number | undefined; atHeadKey: string } {
    let k = this.withoutParams.get(method);
    if (k === undefined) {
      const key = `${this.network}\u0000${method}\u0000[]`;
      this.withoutParams.set(method, (k = { key, head: this.head.number, atHeadKey: `${key}\u0000@${this.head.number ?? '?'}` }));
    } else if (k.head !== this.head.number) {
      k.head = this.head.number;
      k.atHeadKey = `${k.key}\u0000@${k.head ?? '?'}`;
    }
    return k;
  }

  /**
   * Answers `method(params)`, from the cache or through `call`; says which in `seen.cache`. `looked`: this call's
   * lookup, when it was made in the same turn (a miss of `atOnce`).
   */
  async run(method: string, params: unknown[], call: () => Promise<UpstreamAnswer>, seen: Caller, looked?: CacheLookup): Promise<UpstreamAnswer> {
    const l = looked ?? this.lookup(method, params);
    if (!l) {
      seen.cache = 'MISS';
      return call();
    }
    const { policy, epoch, key, atHeadKey, hit } = l;
    if (hit) {
      seen.cache = hitFor(hit, seen.key.account.id);
      return hit;
    }
    seen.cache = 'MISS';
    // Identical calls in flight share one upstream call, within one head epoch.
    const flightKey = `${epoch}\u0000${atHeadKey}`;
    const flying = this.inflight.get(flightKey);
    // A call stopped for its own caller (gone, or out of budget) is not this caller's answer: it asks for itself.
    if (flying) return flying.catch((err) => (err instanceof CallAborted ? call() : Promise.reject(err)));
    const p = this.tier ? this.fromTier(this.tier, l, params, call, seen) : call();
    this.inflight.set(flightKey, p);
    try {
      const answer = await p;
      if (answer.error === undefined) {
        const scope = policy(params, answer.result, this.final);
        const kept = scope === 'forever' || (scope === 'head' && this.head.epoch === epoch);
        const filledBy = (answer as Partial<CachedAnswer>).filledBy ?? seen.key.account.id;
        const entry: CachedAnswer | undefined = kept ? { result: answer.result, error: undefined, raw: answer.raw, filledBy } : undefined;
        if (scope === 'forever') this.store.set(key, entry!);
        else if (entry) this.headFor(epoch).set(atHeadKey, entry);
      }
      return answer;
    } finally {
      this.inflight.delete(flightKey);
    }
  }

  /**
   * A miss through the shared tier: answers that cannot change under their key, answers tied to the head under the
   * cluster's agreed head (cluster mode only: one instance's head is its own), kept there on the same terms as here.
   */
  private fromTier(tier: SharedTier, l: CacheLookup, params: unknown[], call: () => Promise<UpstreamAnswer>, seen: Caller): Promise<UpstreamAnswer> {
    const before = l.policy(params, undefined, this.final);
    const slot = this.slotOf(tier, l, before);
    if (!slot) return call();
    const keep = (a: UpstreamAnswer) => {
      const scope = l.policy(params, a.result, this.final);
      return before === 'forever' ? scope === 'forever' : scope !== 'never' && this.head.epoch === l.epoch;
    };
    return tier.fetch(slot, seen.key.account.id, call, keep, waitWithin(tier.o.waitMs, seen.signal)).then((a) => {
      if ('filledBy' in a) seen.cache = hitFor(a as CachedAnswer, seen.key.account.id);
      return a;
    });
  }

  private slotOf(tier: SharedTier, l: CacheLookup, before: string): SharedSlot | undefined {
    if (before === 'forever') return { network: this.network, key: l.key, ttlMs: tier.o.ttlMs };
    const head = this.head.number;
    if (tier.o.headTtlMs === 0 || !this.head.shared || head === undefined || this.head.epoch !== l.epoch) return undefined;
    return { network: this.network, key: headSlotKey(this.network, head, l.key.slice(this.network.length + 1)), ttlMs: tier.o.headTtlMs };
  }
}

/** A wait for another instance's call: at most `waitMs`, and half what is left of the caller's deadline. */
function waitWithin(waitMs: number, signal: object | undefined): number {
  const due = (signal as { dueAt?: number } | undefined)?.dueAt;
  return due ? Math.min(waitMs, Math.max(0, (due - performance.now()) / 2)) : waitMs;
}
