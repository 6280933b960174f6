/**
 * The pool's part in checking answers (networks.<n>.verify, chain/verify/): an answer that failed a check counts
 * against its node and is asked of the others, and the blocks the verifier checks against are read from members
 * other than the one that answered.
 */
import { performance } from 'node:perf_hooks'; // the global one is a getter on globalThis, called at each use
import type { Due } from '../background/coarse-clock.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import { classifyFailure, UNVERIFIED } from '../upstream/classify.ts';
import type { Piece } from './logs-split.ts';
import { untried } from './member-choice.ts';
import { record } from './member-outcome.ts';
import type { Attempt, PoolState } from './pool-state.ts';
import type { Route } from './route.ts';
import type { UpstreamMember } from './upstream-member.ts';
import { RETRY, VERIFY } from './upstream-spend.ts';

/**
 * The answer `got` failed check `failed` (chain/verify/): it counts against its node's breaker, and each other
 * member is asked in turn; the first answer that passes (or a node's error, which is checked by no one) stands.
 * None: ANSWER_UNVERIFIED naming the check, never the wrong answer. `logs-missing` (no logs for a block whose
 * bloom admits the filter) is a doubt, not a lie: another node's answer that passes convicts the first node; one
 * that is as empty agrees with it and stands; with no other node, the first answer stands.
 */
export async function reverified(pool: PoolState, got: Piece, failed: string, spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route): Promise<Piece> {
  const first = got.member;
  const doubt = failed === 'logs-missing';
  if (!doubt) unverified(pool, first, failed);
  const tried = new Set<UpstreamMember>([first]);
  for (;;) {
    if (route.signal?.aborted) throw route.signal.reason;
    const next = untried(pool, route, tried, spec.name);
    if (next === undefined) {
      if (doubt) return got;
      throw new GatewayError('ANSWER_UNVERIFIED', { method: spec.name, network: pool.network, check: failed });
    }
    tried.add(next);
    let again: Attempt;
    try {
      again = await pool.attempt(next, spec, params, timeoutMs, route.signal, RETRY);
    } catch (err) {
      if (!classifyFailure(err).retry || route.signal?.aborted) throw err;
      continue;
    }
    if (again.answer.error !== undefined) {
      if (again.outcome.retry) continue;
      return { ...again, member: next };
    }
    const f = await pool.verifier!.check(spec.verify!, params, again.answer.result, next);
    if (f === 'logs-missing' && doubt) return { ...again, member: next };
    if (f === undefined) {
      if (doubt) unverified(pool, first, failed);
      return { ...again, member: next };
    }
    if (f !== 'logs-missing') unverified(pool, next, f);
    if (!doubt || f !== 'logs-missing') failed = f;
  }
}

/** Member `m` answered something that failed check `check`: a failure for its breaker, counted for /readyz and /metrics. */
export function unverified(pool: PoolState, m: UpstreamMember, check: string): void {
  const counts = (m.verifyFailures ??= {});
  const first = counts[check] === undefined;
  counts[check] = (counts[check] ?? 0) + 1;
  pool.onVerifyFailure?.(m.label, check);
  if (first) pool.log.warn({ upstream: m.label, check }, 'upstream answer failed verification; asked elsewhere (counted in /readyz verifyFailures)');
  record(pool, m, UNVERIFIED, new Error(`its answer failed verification (${check})`));
}

/**
 * Block `n` (header and transaction hashes) for the verifier: from up to two usable members other than `not` that
 * hold it, then `not`; each next one is also asked when the one before has not answered within its usual time
 * (`hedgeAfter`; 1 s when hedging is off), so that a stalled node does not hold the caller; the first `sound`
 * block wins (its hash its fields', the agreed one). A node whose block is not sound has its answer counted as
 * failing `block-hash`; `unsound` when every one that answered gave such a block.
 */
export function readBlock(pool: PoolState, n: number, not: unknown, sound: (b: Record<string, unknown>) => boolean, timeoutMs: number): Promise<Record<string, unknown> | 'unsound' | undefined> {
  const head = pool.head();
  const best = pool.best();
  const lagFrom = pool.lagFrom?.() ?? best;
  const now = pool.now();
  // Nodes that failed checks before are asked after those that did not.
  const failed = (m: UpstreamMember) => (m.verifyFailures === undefined ? 0 : 1);
  const others = pool.members.filter((m) => m !== not && m.usable(best, pool.policy, now, lagFrom) && (m.head ?? -1) >= n && m.holds('history', n, head))
    .sort((a, b) => failed(a) - failed(b));
  // The node that answered is asked last, whatever its health: it has just shown it holds the block.
  const order = [...others.slice(0, 2), ...pool.members.filter((m) => m === not)];
  const hedge = pool.policy.hedge;
  return new Promise((resolve) => {
    let next = 0;
    let running = 0;
    let unsound = false;
    let done = false;
    const timer: Due = { dueAt: 0, due: () => ask() };
    const finish = (b: Record<string, unknown> | 'unsound' | undefined) => {
      done = true;
      pool.clock.remove(timer);
      resolve(b);
    };
    const ask = () => {
      if (done) return;
      pool.clock.remove(timer);
      if (next >= order.length) return running === 0 ? finish(unsound ? 'unsound' : undefined) : undefined;
      const m = order[next++];
      running++;
      pool.headerReads++;
      if (next < order.length) {
        timer.dueAt = performance.now() + (hedge && hedge.maxMs > 0 ? m.hedgeAfter(hedge.minMs, hedge.maxMs) : 1000);
        pool.clock.add(timer);
      }
      pool.via(m, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false], timeoutMs, undefined, VERIFY).then((a) => {
        const b = a.result as Record<string, unknown> | null | undefined;
        if (done || !b || typeof b !== 'object') return;
        if (sound(b)) return finish(b);
        unsound = true;
        unverified(pool, m, 'block-hash');
      }, () => {
        // Recorded by the pool; the next member.
      }).finally(() => {
        running--;
        if (!done) ask();
      });
    };
    ask();
  });
}
