/**
 * A lookup by hash answered `null` (or a transaction still pending) by a node that may only not have it yet: asked
 * once of a node ahead of it, whose answer stands (docs/architecture.md, "Lookups by hash").
 */
import type { CallSignal } from '../errors/on-abort.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import { oldestHeld } from './holdings.ts';
import type { PoolState } from './pool-state.ts';
import type { Route } from './route.ts';
import type { UpstreamMember } from './upstream-member.ts';
import { RETRY } from './upstream-spend.ts';

/**
 * An answer that may only say the node has not caught up (the method's spec says when, src/methods/specs.ts): a
 * `null` by hash, or a transaction by hash still pending (no block) on a node behind the one that mined it (a
 * transaction read back as pending after its receipt had been seen). Not an answer to pass on.
 */
export const mayBeLag = (spec: MethodFacts, result: unknown): boolean =>
  result === null ? spec.nullMayBeLag : spec.pendingMayBeLag === true && typeof result === 'object' && (result as { blockNumber?: unknown }).blockNumber == null;

/** The newest block a member is known to have: its head, or a newer block its answers showed. */
const reached = (m: UpstreamMember): number => Math.max(m.head ?? -1, m.shown ?? -1);

/**
 * A `null` (or a pending transaction) from a node that may only not have it yet: asked once of another node that
 * may have it, whose answer stands. Such a node is one ahead of `first` by what the gateway knows of their heads,
 * or, when `first` is behind the block a caller was already shown (read-your-writes), any other node: its own head
 * may be read a moment late. Nodes that take calls come first, the furthest ahead first; else a node whose breaker
 * is open but that serves this chain (it may be slow, not gone), asked within the hedge's bound so that a dead node
 * does not hold the caller. A node at the front's null, or no such node, is the answer.
 */
export async function fromAhead(pool: PoolState, first: UpstreamMember, answer: UpstreamAnswer, spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route, signal?: CallSignal): Promise<UpstreamAnswer> {
  const best = pool.best();
  const lagFrom = pool.lagFrom?.() ?? best;
  const now = pool.now();
  const seen = pool.seenHead?.();
  const behindSeen = seen !== undefined && (first.head === undefined || first.head < seen);
  // A node that holds less history than another (pruned receipts, EIP-4444) may lack an old block or transaction
  // the other has: its null is asked of a node whose history reaches further back.
  const head = pool.head();
  const history = (m: UpstreamMember) => (m.holding.history === undefined ? 0 : oldestHeld(m.holding.history, head));
  const firstHistory = pool.windowed ? history(first) : 0;
  let ahead: UpstreamMember | undefined;
  let open: UpstreamMember | undefined;
  for (const m of pool.members) {
    const has = reached(m);
    if (m === first || m.unconfirmed || m.forked || has < 0 || m.resting(now)) continue;
    if (!behindSeen && first.head !== undefined && has <= first.head && !(firstHistory > 0 && history(m) < firstHistory)) continue;
    if (!route.dedicated && m.config.role === 'dedicated') continue;
    if (m.usable(best, pool.policy, now, lagFrom)) {
      if (ahead === undefined || has > reached(ahead)) ahead = m;
    } else if (m.breaker(now) !== 'closed' && !m.suspect(best) && (open === undefined || has > reached(open))) {
      open = m;
    }
  }
  const other = ahead ?? open;
  if (!other) return answer;
  try {
    const ms = ahead ? timeoutMs : Math.min(timeoutMs, pool.policy.hedge?.maxMs || 1000);
    return await pool.sentVia(other, spec, params, ms, signal, RETRY);
  } catch {
    return answer;
  }
}
