import type { Logger } from 'pino';
import { RedisAnswers } from './answers/redis-answers.ts';
import { NO_SHARED_ANSWERS, type SharedAnswers } from './answers/shared-answers.ts';
import { memoryEventBudgets } from './event-budget/event-budgets.ts';
import type { EventBudgets } from './event-budget/event-budget.ts';
import { sharedEventBudgets } from './event-budget/shared-event-budget.ts';
import { Fallback, type FallbackOptions, type SharedAt } from './fallback.ts';
import type { FilterStore } from './filter-store/filter-store.ts';
import { MemoryFilterStore } from './filter-store/memory-filter-store.ts';
import { RedisFilterStore } from './filter-store/redis-filter-store.ts';
import { RemoteFilterStore } from './filter-store/remote-filter-store.ts';
import { UNAVAILABLE_FILTERS } from './filter-store/unavailable-filter-store.ts';
import type { HeadsHub } from './heads/heads-hub.ts';
import { MemoryHeads } from './heads/memory-heads.ts';
import { withOwnHead } from './heads/own-head.ts';
import { RedisHeads } from './heads/redis-heads.ts';
import { RemoteHeads } from './heads/remote-heads.ts';
import type { Leases } from './leases/leases.ts';
import { MemoryLeases } from './leases/memory-leases.ts';
import { RedisLeases } from './leases/redis-leases.ts';
import { RemoteLeases } from './leases/remote-leases.ts';
import type { BackoffOptions, LoginBackoffStore } from './login-backoff/login-backoff.ts';
import { MemoryLoginBackoff } from './login-backoff/memory-login-backoff.ts';
import { RedisLoginBackoff } from './login-backoff/redis-login-backoff.ts';
import { RemoteLoginBackoff } from './login-backoff/remote-login-backoff.ts';
import { NOTHING_SHARED, SharedLoginBackoff } from './login-backoff/shared-login-backoff.ts';
import type { SharedStateClient } from './protocol.ts';
import { MemoryRateLimiter } from './rate-limiter/memory-rate-limiter.ts';
import type { OpenedRateLimiter, RateLimiter } from './rate-limiter/rate-limiter.ts';
import { LeasedBuckets } from './rate-limiter/leased-buckets.ts';
import { RedisRateLimiter } from './rate-limiter/redis-rate-limiter.ts';
import { RemoteRateLimiter } from './rate-limiter/remote-rate-limiter.ts';
import { redisWhere } from './redis-connections.ts';

/** Everything a process shares with the others serving one deployment, each kind behind its interface. */
export interface SharedState {
  rateLimiter: OpenedRateLimiter;
  eventBudgets: EventBudgets;
  filters: FilterStore;
  /** Undefined in one process alone: its head is its own, and no call waits on sharing it. */
  heads: HeadsHub | undefined;
  leases: Leases;
  loginBackoff: LoginBackoffStore & Pick<MemoryLoginBackoff, 'trusted'>;
  /** The cache's shared tier (cache/shared-tier.ts): only in Redis, and only when `cache.shared.enabled`. */
  answers: SharedAnswers | undefined;
  close(): Promise<void>;
}

export interface SharedStateOptions {
  /** `limits.redisUrl` (REDIS_URL): instances share their state in Redis. */
  redisUrl?: string;
  /** `limits.redisTimeoutMs`: a slower Redis command counts as Redis failing. */
  redisTimeoutMs: number;
  /** Prepended to every Redis key (default `ng:`): deployments, and test runs, can share one Redis. */
  redisPrefix?: string;
  /** A worker of `--workers N`: its primary keeps the state the workers share. */
  primary?: SharedStateClient;
  /** The login back-off's rule (api/password-login.ts `loginBackoffOptions`). */
  backoff: BackoffOptions;
  log: Logger;
  /** The clock of one process's buckets (the hot path's: background/turn-clock.ts). */
  now?: () => number;
  /** While a kind is degraded, how often its shared store is asked whether it is back (default 3 s). */
  recheckMs?: number;
  /** `cache.shared`, when enabled: answers kept in Redis too (with a Redis URL; nowhere else). */
  answers?: { maxBytes: number; timeoutMs: number; prefix: string };
}

/**
 * The one place that chooses where the shared state is kept, from the configuration: a worker's primary, Redis
 * (waiting for the first connections at most their connect time-out; a process that cannot connect starts anyway,
 * degraded, and shares once Redis answers), or this process's memory.
 */
export async function openSharedState(o: SharedStateOptions): Promise<SharedState> {
  if (o.primary) return workerState(o.primary, o);
  if (o.redisUrl) return redisState(o.redisUrl, o);
  // One process alone: decided in its memory, at once (no promise on the request path).
  const rateLimiter = Object.assign(new MemoryRateLimiter(o.now), { status: () => 'memory' as const });
  return assemble({ rateLimiter, eventBudgets: memoryEventBudgets, filters: new MemoryFilterStore(), heads: undefined, leases: new MemoryLeases(), loginBackoff: new MemoryLoginBackoff(o.backoff), answers: undefined });
}

/**
 * What the primary of `--workers N` keeps for its workers (primary-state.ts offers it to them): memory variants, and
 * the per-second buckets it leases to them.
 */
export function keptForWorkers(backoff: BackoffOptions, now?: () => number) {
  const leases = new MemoryLeases();
  return { buckets: new LeasedBuckets(), filters: new MemoryFilterStore(now), heads: new MemoryHeads(leases), leases, loginBackoff: new MemoryLoginBackoff(backoff) };
}

/** The remote variants of each kind, and how to ask their store whether it answers. */
interface Remotes {
  at: SharedAt;
  where: string;
  rateLimiter: RateLimiter;
  filters: FilterStore;
  heads: (leases: Leases) => HeadsHub;
  leases: Leases;
  loginBackoff: LoginBackoffStore & Partial<{ close(): Promise<void> }>;
  /** Per kind: one round trip to its store. */
  ping: Record<Kind, () => Promise<unknown>>;
  /** Per kind: its first connection, made as its fallback is (after `heads(leases)`). */
  connect?: Record<Kind, () => Promise<unknown>>;
  /** The cache's shared tier, when asked for; its store pinged and connected as the kinds' are. */
  answers?: SharedAnswers & { ping(): Promise<unknown>; connect(): Promise<unknown> };
}

type Kind = 'rateLimiter' | 'filters' | 'heads' | 'leases' | 'loginBackoff';

/** Each kind's words for the one line logged while its store does not answer. */
const DEGRADED: Record<Kind, Pick<FallbackOptions, 'kind' | 'meanwhile'>> = {
  rateLimiter: { kind: 'per-second limits and failure guards', meanwhile: "kept in this process's memory" },
  filters: { kind: 'filters', meanwhile: 'filter calls answer -32002 filters_unavailable' },
  heads: { kind: 'heads and node checks', meanwhile: 'this process answers from its own head and checks its nodes itself (answers across processes may be a block apart)' },
  leases: { kind: 'leases', meanwhile: 'this process holds every lease it asks for' },
  loginBackoff: { kind: 'login back-off', meanwhile: "kept in this process's memory" },
};
const ANSWERS_DEGRADED = { kind: 'shared cache tier', meanwhile: "answers are kept in this process's memory cache only" };

/**
 * Every kind of `r` through a Fallback of its own: the remote variant while its store answers, the kind's local
 * stand-in while not. Resolves once the first connections have settled.
 */
async function degradable(r: Remotes, o: SharedStateOptions): Promise<SharedState> {
  const fallbacks: Fallback[] = [];
  const fallback = (k: Kind) => {
    const f = new Fallback({ ...DEGRADED[k], at: r.at, where: r.where, ping: r.ping[k], log: o.log, recheckMs: o.recheckMs, connecting: r.connect?.[k]() });
    fallbacks.push(f);
    return f;
  };
  const limits = fallback('rateLimiter');
  const alone = new MemoryRateLimiter();
  const rateLimiter: OpenedRateLimiter = { ...limits.wrap(r.rateLimiter, alone, ['consume']), status: () => limits.status(), close: () => closeAll(r.rateLimiter, alone) };
  const leases: Leases = { ...fallback('leases').wrap(r.leases, new MemoryLeases(), ['take']), close: () => r.leases.close() };
  const hub = r.heads(leases);
  const heads = withOwnHead(hub, fallback('heads'));
  const filters: FilterStore = {
    ...fallback('filters').wrap(r.filters, UNAVAILABLE_FILTERS, ['add', 'get', 'update', 'remove', 'noteSent', 'sentSince']),
    get size() { return r.filters.size; },
    close: () => r.filters.close(),
  };
  const shared = fallback('loginBackoff').wrap<LoginBackoffStore, 'waitSeconds' | 'failed' | 'succeeded'>(r.loginBackoff, NOTHING_SHARED, ['waitSeconds', 'failed', 'succeeded']);
  const loginBackoff = new SharedLoginBackoff(new MemoryLoginBackoff(o.backoff), shared);
  const a = r.answers;
  let answers: SharedAnswers | undefined;
  if (a) {
    const f = new Fallback({ ...ANSWERS_DEGRADED, at: r.at, where: r.where, ping: () => a.ping(), log: o.log, recheckMs: o.recheckMs, connecting: a.connect() });
    fallbacks.push(f);
    answers = { ...f.wrap<SharedAnswers, 'find' | 'keep' | 'release' | 'awaitKept' | 'drop'>(a, NO_SHARED_ANSWERS, ['find', 'keep', 'release', 'awaitKept', 'drop']), close: () => a.close() };
  }
  await Promise.all(fallbacks.map((f) => f.ready));
  return assemble({ rateLimiter, eventBudgets: sharedEventBudgets(rateLimiter), filters, heads, leases, loginBackoff, answers }, () => r.loginBackoff.close?.());
}

/** In Redis, each kind on a connection of its own; the first connections are made together. */
function redisState(url: string, o: SharedStateOptions): Promise<SharedState> {
  const prefix = o.redisPrefix ?? 'ng:';
  const commandTimeoutMs = o.redisTimeoutMs;
  const rateLimiter = new RedisRateLimiter({ url, prefix: `${prefix}rl:`, commandTimeoutMs });
  const filters = new RedisFilterStore({ url, prefix: `${prefix}f:`, commandTimeoutMs });
  const leases = new RedisLeases({ url, prefix, commandTimeoutMs });
  const loginBackoff = new RedisLoginBackoff({ ...o.backoff, url, prefix: `${prefix}lb:`, commandTimeoutMs });
  let heads!: RedisHeads;
  const each = (f: (part: { ping(): Promise<void>; connect(): Promise<void> }) => () => Promise<unknown>): Record<Kind, () => Promise<unknown>> => ({
    rateLimiter: f(rateLimiter), filters: f(filters), leases: f(leases), loginBackoff: f(loginBackoff), heads: () => f(heads)(),
  });
  return degradable({
    at: 'redis', where: redisWhere(url), rateLimiter, filters, leases, loginBackoff,
    heads: (shared) => (heads = new RedisHeads({ url, timeoutMs: commandTimeoutMs, leases: shared, prefix })),
    ping: each((part) => () => part.ping()),
    connect: each((part) => () => part.connect()),
    answers: o.answers && new RedisAnswers({ url, prefix: o.answers.prefix, maxBytes: o.answers.maxBytes, commandTimeoutMs: o.answers.timeoutMs }),
  }, o);
}

/** In the primary of this worker (`--workers N`), over IPC. */
function workerState(primary: SharedStateClient, o: SharedStateOptions): Promise<SharedState> {
  const ping = () => primary.call('shared', 'ping', []);
  return degradable({
    at: 'primary', where: 'the primary process',
    rateLimiter: new RemoteRateLimiter(primary), filters: new RemoteFilterStore(primary), heads: (leases) => new RemoteHeads(primary, leases),
    leases: new RemoteLeases(primary), loginBackoff: new RemoteLoginBackoff(primary),
    ping: { rateLimiter: ping, filters: ping, heads: ping, leases: ping, loginBackoff: ping },
  }, o);
}

function assemble(parts: Omit<SharedState, 'close'>, more: () => unknown = () => {}): SharedState {
  return { ...parts, close: async () => { await closeAll(parts.rateLimiter, parts.filters, ...(parts.heads ? [parts.heads] : []), parts.leases, ...(parts.answers ? [parts.answers] : [])); await more(); } };
}

async function closeAll(...parts: Array<{ close(): Promise<void> }>): Promise<void> {
  await Promise.all(parts.map((p) => p.close()));
}
