/**
 * What one call's answer or failure does to the member that took it, once classified (upstream/classify.ts): its
 * breaker (and a rest when the node asked for one), its usual pace, its head and the newest block it showed, an
 * eth_getLogs range it refused, and a read of its chain id again when its head jumps or it comes back.
 */
import { performance } from 'node:perf_hooks'; // the global one is a getter on globalThis, called at each use
import { callerGone } from '../errors/call-aborted.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import { classifyAnswer, classifyFailure, forCaller, type Outcome } from '../upstream/classify.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import { blockSeenIn } from './block-seen.ts';
import { noteNumber } from './holdings-route.ts';
import { learnRange } from './logs-split.ts';
import type { Attempt, PoolState } from './pool-state.ts';
import type { UpstreamMember } from './upstream-member.ts';

/** Member `m` gave no answer (`err`, thrown on): recorded against it, unless its caller had left. */
export function notAnswered(pool: PoolState, m: UpstreamMember, spec: MethodFacts, err: unknown, t0: number): never {
  pool.onCall?.(m.label, (performance.now() - t0) / 1000, false);
  // A caller that left says nothing of the node.
  if (callerGone(err)) m.settled();
  else record(pool, m, classifyFailure(err), err, !spec.trace);
  throw err;
}

/**
 * Member `m` answered in `ms`: its outcome recorded, the answer's block noted. A node error's internals (a `stack`)
 * are dropped here, so no upstream's reaches a caller.
 */
export function answered(pool: PoolState, m: UpstreamMember, spec: MethodFacts, params: unknown[], answer: UpstreamAnswer, ms: number, check = false): Attempt | Promise<Attempt> {
  pool.onCall?.(m.label, ms / 1000, true);
  // A trace's time is the caller's work, not the node's usual pace (the hedge delay).
  if (!spec.trace) m.observe(ms);
  if (answer.error !== undefined) answer = { error: forCaller(answer.error) };
  const outcome = classifyAnswer(answer);
  // Sent before its connections dropped, answered after (maybe by the node now behind its address): it stands
  // only once the member's chain id is confirmed.
  if (m.unconfirmed && !check) return onceConfirmed(pool, m, { answer, outcome });
  if (outcome.kind === 'too-wide' && spec.splitsRange) {
    learnRange(m, outcome.refusal, params);
    if (m.logsRange !== undefined) pool.logsBounded = true;
  }
  record(pool, m, outcome, answer.error && `the node answered ${answer.error.code} ${String(answer.error.message).slice(0, 200)}`);
  if (answer.error === undefined) {
    if (pool.windowed && spec.seen === 'block' && !check) noteNumber(pool.numbers, answer.result);
    const n = blockSeenIn(spec.name, params, answer.result);
    if (n !== undefined && !check && (m.shown === undefined || n > m.shown)) m.shown = n;
    if (n !== undefined && (m.head === undefined || n > m.head)) {
      // A block far above its own head, in an answer to a caller: the node behind its URL may be another chain's.
      // The answer waits until its chain id is read again (`jumpBlocks` undefined: an embedded chain, its own).
      if (!check && pool.jumpBlocks !== undefined && m.head !== undefined && n > m.head + pool.jumpBlocks) return jumped(pool, m, n, { answer, outcome });
      m.head = n;
    }
  }
  return { answer, outcome };
}

/**
 * Member `m` answered with block `n`, a jump from its head: it takes no call until its chain id is read again,
 * and this answer passes only if that read confirms it (else the call fails as unanswered: a read is asked elsewhere).
 */
async function jumped(pool: PoolState, m: UpstreamMember, n: number, got: Attempt): Promise<Attempt> {
  pool.log.info({ upstream: m.label, head: m.head, shown: n }, 'upstream head jumped; its chain id is read again');
  m.unconfirmed = true;
  await pool.confirm?.(m);
  if (m.unconfirmed) throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: `its head jumped from ${m.head} to ${n} and its chain id is not confirmed` });
  if (m.head === undefined || n > m.head) m.head = n;
  return got;
}

/** An answer from a member whose chain id is not confirmed: it stands once that is read and is the network's. */
async function onceConfirmed(pool: PoolState, m: UpstreamMember, got: Attempt): Promise<Attempt> {
  if (!m.refused) await pool.confirm?.(m);
  if (m.unconfirmed) throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: m.refused ? (m.lastError ?? 'it serves another chain') : 'the node has not answered its chain id' });
  return got;
}

/** What an outcome does to the member's breaker. */
export function record(pool: PoolState, m: UpstreamMember, outcome: Outcome, err: unknown, timeoutOpens = false): void {
  if (outcome.breaker === 'success') {
    if (m.succeeded()) pool.log.info({ upstream: m.label }, 'upstream answers again');
  } else if (outcome.breaker === 'failure') {
    // A call that got no answer in its time (not a trace, whose time is the caller's work): the node is stalled
    // or gone, and the breaker opens at once, not after more calls wait as long (a node under SIGSTOP
    // held every reader for seconds until three health checks had failed).
    const policy = timeoutOpens && outcome.kind === 'timeout' && pool.members.length > 1 ? { ...pool.policy, breakerFailures: 1 } : pool.policy;
    if (m.failed(err, policy, pool.now(), outcome.restMs)) {
      pool.log.warn({ upstream: m.label, error: m.lastError }, 'upstream failing: breaker open');
      // It may come back as another node (a URL whose node was replaced): its chain id is read before it serves.
      if (pool.confirm) m.unconfirmed = true;
    }
  } else {
    m.settled();
  }
}
