/**
 * A read asked of the pool's other members when its first gave no answer to pass on (upstream/classify.ts says
 * which outcomes are retried): a failure or a node missing the block, asked of each other member that may hold
 * it; a method the node lacks, asked of each other member that may have it.
 */
import type { CallSignal } from '../errors/on-abort.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import { classifyFailure, type Outcome } from '../upstream/classify.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import { learnNotHeld } from './holdings-route.ts';
import type { Piece } from './logs-split.ts';
import { another, candidates, holder, untried } from './member-choice.ts';
import { notHeld } from './not-held.ts';
import type { Attempt, PoolState } from './pool-state.ts';
import type { Route } from './route.ts';
import type { UpstreamMember } from './upstream-member.ts';
import { RETRY } from './upstream-spend.ts';
import { unverified } from './verified-read.ts';

/** The outcome of the gateway's own answer (BLOCK_NOT_HELD): nobody's fault, not retried. */
const GATEWAY_REFUSAL: Outcome = { kind: 'gateway', retry: false, breaker: 'neutral' };

/**
 * A read whose first node gave no answer to pass on (`got`: a capacity error, "missing trie node", "pruned";
 * `failure`: no answer at all, a 429): each other usable node with room (and, for a call at a block, that may
 * hold it) is asked in turn, and the first real answer stands; a node that says it lacks the block has that
 * learnt. When none is left: for a call at a block that some node lacks (it said so, or is known not to hold it),
 * BLOCK_NOT_HELD, never a node's words; otherwise the first node's answer, or the last failure.
 */
export async function retried(pool: PoolState, first: UpstreamMember, got: Attempt | undefined, failure: unknown, spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route): Promise<Piece> {
  const tried = new Set<UpstreamMember>([first]);
  const firstPiece: Piece | undefined = got && { ...got, member: first };
  let missing = got?.outcome.kind === 'missing-data';
  if (missing) learnNotHeld(pool, first, route);
  for (;;) {
    if (route.signal?.aborted) break;
    let next = untried(pool, route, tried, spec.name);
    // None usable left: the next least bad one is still asked once (a node a moment behind the head, as checks
    // see it), if it may hold the call's block.
    if (next === undefined && tried.size === 1) {
      const m = another(pool, route, first, spec.name);
      if (m !== undefined && !tried.has(m) && (!pool.windowed || route.needs === undefined || holder(pool, route)(m))) next = m;
    }
    if (next === undefined) break;
    tried.add(next);
    try {
      const again = await pool.attempt(next, spec, params, timeoutMs, route.signal, RETRY);
      if (pool.verifier !== undefined && spec.verify !== undefined && again.answer.error === undefined) {
        const failed = await pool.verifier.check(spec.verify, params, again.answer.result, next);
        // A doubt (logs-missing) with nothing to weigh it against: the answer stands.
        if (failed !== undefined && failed !== 'logs-missing') {
          unverified(pool, next, failed);
          continue;
        }
      }
      if (!again.outcome.retry) return { ...again, member: next };
      if (again.outcome.kind === 'missing-data') {
        missing = true;
        learnNotHeld(pool, next, route);
      }
    } catch (err) {
      if (!classifyFailure(err).retry || route.signal?.aborted) throw err;
      failure = err;
    }
  }
  const needs = route.needs;
  const n = route.oldest ?? route.minBlock;
  const head = pool.head();
  const lacking = needs !== undefined && n !== undefined && (missing || pool.members.some((m) => !m.holds(needs, n, head)));
  if (!route.signal?.aborted && lacking && head !== undefined && n! <= head) {
    const { usable } = candidates(pool, route, undefined, spec.name);
    return { answer: { error: notHeld(pool.network, needs, n!, usable, head).toJSON() }, outcome: GATEWAY_REFUSAL, member: first };
  }
  if (firstPiece) return firstPiece;
  throw failure;
}

/**
 * Member `m` answered that it lacks the method (-32601, "does not exist"): it is not asked it again for a while,
 * and each other member that may have it is, in turn; the first that serves it answers. None: the last refusal,
 * which adapters answer on (net_peerCount, eth_mining) as from a single node.
 */
export async function elsewhere(pool: PoolState, m: UpstreamMember, answer: UpstreamAnswer, spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route, signal?: CallSignal): Promise<UpstreamAnswer> {
  let last = m;
  for (let tries = 1; tries < pool.members.length && !signal?.aborted; tries++) {
    last.learnGap(spec.name, pool.now());
    pool.lacking = pool.guarded = true;
    const next = another(pool, route, last, spec.name);
    if (next === undefined) return answer;
    const got = await pool.attempt(next, spec, params, timeoutMs, signal, RETRY);
    if (got.outcome.kind !== 'not-supported') return got.answer;
    answer = got.answer;
    last = next;
  }
  last.learnGap(spec.name, pool.now());
  return answer;
}
