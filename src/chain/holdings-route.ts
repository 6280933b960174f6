/**
 * Calls routed by what the pool's members hold (holdings.ts), while some member holds less than every block
 * (`windowed`): a call by block hash routed by the number an answer showed for it, BLOCK_NOT_HELD before asking
 * when no member that may answer holds the block, and a member's "not held" learnt from its answer.
 */
import type { MethodFacts } from '../methods/method-spec.ts';
import { learnt, oldestHeld } from './holdings.ts';
import { candidates } from './member-choice.ts';
import { notHeld } from './not-held.ts';
import type { PoolState } from './pool-state.ts';
import type { Route } from './route.ts';
import type { UpstreamMember } from './upstream-member.ts';

/** Blocks below a member's head within which its "header not found" may only mean it is a moment behind. */
const NEAR_HEAD = 8;

/**
 * A call by block hash that needs the block's history (eth_getBlockReceipts by hash, as indexers ask it), for a
 * block whose number an answer showed (`numbers`): routed as a call at that number, so that it goes to a node that
 * holds it rather than to one that answers `null`.
 */
export function byHashHeld(pool: PoolState, spec: MethodFacts, params: unknown[], route: Route): Route {
  if (route.needs !== undefined || spec.holds === undefined || spec.block === undefined || spec.block.by === 'filter') return route;
  const v = params[spec.block.index];
  const hash = typeof v === 'string' && v.length === 66 ? v : (v as { blockHash?: unknown } | null)?.blockHash;
  const n = typeof hash === 'string' ? pool.numbers.get(hash.toLowerCase()) : undefined;
  return n === undefined ? route : { ...route, needs: spec.holds, oldest: n };
}

/** A block in an answer: its number kept by its hash (a few thousand, the oldest go first). */
export function noteNumber(numbers: Map<string, number>, result: unknown): void {
  const b = result as { hash?: unknown; number?: unknown } | null;
  if (b === null || typeof b !== 'object' || typeof b.hash !== 'string' || typeof b.number !== 'string') return;
  if (numbers.size >= 4096) numbers.delete(numbers.keys().next().value!);
  numbers.set(b.hash.toLowerCase(), Number(b.number));
}

/**
 * Throws the catalogue's BLOCK_NOT_HELD when no member the call may use now holds what it needs at its block
 * (pruned nodes only, the archive node down): no node is asked what none holds.
 */
export function heldByOne(pool: PoolState, route: Route, method: string): void {
  const n = route.oldest ?? route.minBlock;
  if (n === undefined) return;
  const { usable } = candidates(pool, route, undefined, method);
  const head = pool.head();
  const allowed = usable.filter((m) => route.dedicated || m.config.role !== 'dedicated');
  if (allowed.some((m) => m.holds(route.needs!, n, head))) return;
  if (allowed.length === 0) return; // nobody answers at all: the usual least bad node and its failure
  throw notHeld(pool.network, route.needs!, n, allowed, head);
}

/**
 * Member `m` said it does not hold the call's oldest block: kept in its holding (sliding with the head) unless
 * the block is near its head (a node a block behind says "header not found" too).
 */
export function learnNotHeld(pool: PoolState, m: UpstreamMember, route: Route): void {
  const n = route.oldest ?? route.minBlock;
  const kind = route.needs;
  if (n === undefined || kind === undefined || m.head === undefined || n > m.head - NEAR_HEAD) return;
  const h = learnt(m.holding[kind], n, false, pool.head());
  if (h) {
    pool.setHeld(m, kind, h);
    pool.log.info({ upstream: m.label, kind, block: n, from: oldestHeld(h, pool.head()) }, 'upstream does not hold the block; calls at it go to the others');
  }
}

/**
 * Block `n` was seen only on members that stopped answering (breaker open), and no usable member (of those the
 * route may use) has reached it. Not when a usable member's head is merely not read yet: heads are learnt from
 * checks and answers, a moment behind the nodes.
 */
export function onlyLostHave(pool: PoolState, n: number, route: Route): boolean {
  const best = pool.best();
  const lagFrom = pool.lagFrom?.() ?? best;
  const now = pool.now();
  let lost = false;
  for (const m of pool.members) {
    if (m.refused || m.forked || m.head === undefined || m.head < n || (!route.dedicated && m.config.role === 'dedicated')) continue;
    if (m.breaker(now) === 'open') lost = true;
    else if (m.usable(best, pool.policy, now, lagFrom)) return false;
  }
  return lost;
}
