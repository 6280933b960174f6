/**
 * Which member of a network's pool takes a call: usable members by role (dedicated ones for a dedicated key, then
 * primaries, then fallbacks), by weight within a role, those with room before those at their own bounds, those
 * that have the call's block and hold what it needs; the designated one for calls whose state lives in one node.
 */
import type { PoolState } from './pool-state.ts';
import type { Route } from './route.ts';
import type { UpstreamMember } from './upstream-member.ts';

/**
 * The member for the next read. Usable members first: dedicated ones for a dedicated key (if the network has
 * any), else primaries by weight, then fallbacks; with `minBlock`, only those whose head has that block. Members at
 * their own rate or concurrency come after those with room, so that a fallback takes the primaries' overflow;
 * with `method`, members that lack it are left out; with `span`, members known to take that eth_getLogs range
 * come first within a role. When none is usable, the least bad one anyway (a network with one dead upstream still
 * tries it): never undefined.
 */
export function pick(pool: PoolState, route: Route, not?: UpstreamMember, method?: string): UpstreamMember {
  const { usable, roomy, gap, now } = pool.guarded ? candidates(pool, route, not, method) : healthy(pool, not, route.minBlock);
  const has = pool.windowed && route.needs !== undefined ? holder(pool, route) : (m: UpstreamMember) => route.minBlock === undefined || (m.head !== undefined && m.head >= route.minBlock);
  const tiers = tiersOf(route);
  const chosen = (roomy !== usable && byRole(roomy, tiers, route, has)) || byRole(usable, tiers, route, has);
  if (chosen) return chosen;
  // Usable, but none has the block yet: the one with the highest head.
  const highest = usable.filter((m) => route.dedicated || m.config.role !== 'dedicated').sort((a, b) => (b.head ?? -1) - (a.head ?? -1))[0];
  if (highest) return highest;
  // Dedicated upstreams are capacity paid for by Dedicated keys: others get them only when nothing else is left.
  // A forked node is not even the least bad: its state at a height it shares a number with is another
  // branch's; with only forked nodes answering, a dead node's failure (503 -32002) is the answer.
  const others = pool.members.filter((m) => m !== not && !m.refused && !m.forked && (route.dedicated || m.config.role !== 'dedicated') && !gap?.(m));
  return others.find((m) => m.breaker(now) !== 'open') ?? others[0] ?? not ?? pool.members.find((m) => !m.forked) ?? pool.members[0];
}

/** The members that may take a read now but `not`, where none has bounds or gaps (`candidates` without them). */
function healthy(pool: PoolState, not: UpstreamMember | undefined, atBlock: number | undefined): { usable: UpstreamMember[]; roomy: UpstreamMember[]; gap: undefined; now: number } {
  const best = pool.best();
  const lagFrom = pool.lagFrom?.() ?? best;
  const now = pool.now();
  const usable = pool.members.filter((m) => m !== not && m.usable(best, pool.policy, now, lagFrom, atBlock));
  return { usable, roomy: usable, gap: undefined, now };
}

/** The members a read may go to now (but `not`, and those lacking `method`), and of them those with room. */
export function candidates(pool: PoolState, route: Route, not: UpstreamMember | undefined, method: string | undefined) {
  const best = pool.best();
  const lagFrom = pool.lagFrom?.() ?? best;
  const now = pool.now();
  const gap = pool.lacking && method !== undefined ? (m: UpstreamMember) => m.lacks(method, now) : undefined;
  const usable = pool.members.filter((m) => m !== not && m.usable(best, pool.policy, now, lagFrom, route.minBlock) && !gap?.(m));
  const roomy = pool.bounded ? usable.filter((m) => m.hasRoom(now)) : usable;
  return { usable, roomy, gap, now };
}

/** Whether a member has the call's block and holds what the call needs at its oldest block (`route.needs`). */
export function holder(pool: PoolState, route: Route): (m: UpstreamMember) => boolean {
  const head = pool.head();
  const needs = route.needs!;
  const n = route.oldest ?? route.minBlock;
  return (m) => (route.minBlock === undefined || (m.head !== undefined && m.head >= route.minBlock)) && (n === undefined || m.holds(needs, n, head));
}

/** Another member than `not` that may take the read now (usable, with room, not lacking it); undefined: none. */
export function another(pool: PoolState, route: Route, not: UpstreamMember, method: string): UpstreamMember | undefined {
  const m = pick(pool, route, not, method);
  return m === not || !m.hasRoom(pool.now()) || (pool.lacking && m.lacks(method, pool.now())) ? undefined : m;
}

/** A member the call may use that holds its block and was not tried yet, by the usual order; undefined: none. */
export function untried(pool: PoolState, route: Route, tried: ReadonlySet<UpstreamMember>, method: string): UpstreamMember | undefined {
  const { usable } = candidates(pool, route, undefined, method);
  const now = pool.now();
  const left = usable.filter((m) => !tried.has(m) && m.hasRoom(now) && (route.dedicated || m.config.role !== 'dedicated'));
  const has = pool.windowed && route.needs !== undefined ? holder(pool, route) : (m: UpstreamMember) => route.minBlock === undefined || (m.head ?? -1) >= route.minBlock;
  return byRole(left, tiersOf(route), route, has) ?? undefined;
}

/** Every member that could serve the network lacks `method` (configured, or said so lately). */
export function noneHas(pool: PoolState, method: string): boolean {
  const now = pool.now();
  return pool.members.every((m) => m.refused || m.lacks(method, now));
}

/**
 * The upstream for calls whose state lives in one node (its accounts and keys). Upstreams given a `signer` order
 * hold the same accounts: the first usable one in that order, so a signer that is down fails over to the next
 * (every eth_sendTransaction got 503 while the one signer was down); none usable, the first of them
 * (its failure is the caller's answer). Without signers, the first primary that is not refused, as before.
 */
export function designated(pool: PoolState): UpstreamMember {
  if (pool.signers.length > 0) {
    const best = pool.best();
    const lagFrom = pool.lagFrom?.() ?? best;
    const now = pool.now();
    return pool.signers.find((m) => m.usable(best, pool.policy, now, lagFrom)) ?? pool.signers.find((m) => !m.refused) ?? pool.signers[0];
  }
  return pool.members.find((m) => m.config.role === 'primary' && !m.refused) ?? pool.members[0];
}

/**
 * The widest eth_getLogs range the members that would take `route` accept (LogsPool): those of the first role
 * with a usable member (with room, when some have), the widest of theirs, undefined when one of them takes any.
 */
export function rangeFor(pool: PoolState, route: Route, method: string): number | undefined {
  const found = candidates(pool, route, undefined, method);
  const list = found.roomy.length > 0 ? found.roomy : found.usable;
  for (const role of tiersOf(route)) {
    let widest = 0;
    for (const m of list) {
      if (m.config.role !== role) continue;
      if (m.logsRange === undefined) return undefined;
      widest = Math.max(widest, m.logsRange);
    }
    if (widest > 0) return widest;
  }
  // None usable: the narrowest known of any, so that the least bad one is not sent more than it takes.
  let narrowest: number | undefined;
  for (const m of pool.members) if (m.logsRange !== undefined && (narrowest === undefined || m.logsRange < narrowest)) narrowest = m.logsRange;
  return narrowest;
}

/** The roles a read tries, in order. */
const DEDICATED_FIRST = ['dedicated', 'primary', 'fallback'] as const;
const SHARED = ['primary', 'fallback'] as const;
const tiersOf = (route: Route) => (route.dedicated ? DEDICATED_FIRST : SHARED);

/**
 * The first role of `tiers` with a member in `list`, one of them by weight: those that have `minBlock` (if any has
 * it), and of those, for a piece of a split eth_getLogs (`span`), those known to take its range (if any does).
 */
function byRole(list: UpstreamMember[], tiers: readonly string[], route: Route, has: (m: UpstreamMember) => boolean): UpstreamMember | undefined {
  for (const role of tiers) {
    let inRole = list.filter((m) => m.config.role === role);
    const span = route.span;
    if (span !== undefined && inRole.length > 1) {
      const fit = inRole.filter((m) => m.logsRange === undefined || m.logsRange >= span);
      if (fit.length > 0) inRole = fit;
    }
    const withBlock = inRole.filter(has);
    const choice = weighted(withBlock.length > 0 ? withBlock : route.minBlock === undefined && route.needs === undefined ? inRole : []);
    if (choice) return choice;
  }
  return undefined;
}

/** One of `members`, each as likely as its weight. */
function weighted(members: UpstreamMember[]): UpstreamMember | undefined {
  if (members.length <= 1) return members[0];
  let total = 0;
  for (const m of members) total += m.config.weight;
  let r = Math.random() * total;
  for (const m of members) {
    r -= m.config.weight;
    if (r < 0) return m;
  }
  return members[members.length - 1];
}
