import { performance } from 'node:perf_hooks'; // the global one is a getter on globalThis, called at each use
import type { CallSignal } from '../errors/on-abort.ts';
import { coarseClock, type CoarseClock } from '../background/coarse-clock.ts';
import type { Logger } from 'pino';
import { classifyFailure } from '../upstream/classify.ts';
import type { Verifier } from './verify/verifier.ts';
import type { Upstream, UpstreamAnswer } from '../upstream/upstream.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import { describe } from '../methods/specs.ts';
import { LogsSplit, type LogsPool, type Piece } from './logs-split.ts';
import type { Holding } from './holdings.ts';
import type { Route } from './route.ts';
import type { HealthPolicy, UpstreamMember } from './upstream-member.ts';
import { ATTEMPT, BACKGROUND, LOG_PIECE, type Purpose } from './upstream-spend.ts';
import type { Attempt, PoolState, RoomWait } from './pool-state.ts';
import { optionsOf } from './call-options.ts';
import { answered, notAnswered, record } from './member-outcome.ts';
import { designated, noneHas, pick, rangeFor } from './member-choice.ts';
import { byHashHeld, heldByOne, onlyLostHave } from './holdings-route.ts';
import { roomFor, roomMade } from './room-wait.ts';
import { hedged } from './hedged-read.ts';
import { fromAhead, mayBeLag } from './from-ahead.ts';
import { elsewhere, retried } from './retried-read.ts';
import { readBlock, reverified } from './verified-read.ts';
import { broadcast } from './broadcast.ts';

export type { Route } from './route.ts';

/**
 * The upstreams of one network (docs/decisions.md §9), as one `Upstream`: reads go to a usable upstream (primaries by
 * weight, then fallbacks: member-choice.ts) and are asked of the others in turn when the outcome says so
 * (upstream/classify.ts: no answer, a 5xx, a 429 or a time-out, a node's capacity error, a node missing the block or
 * state: retried-read.ts), hedged when slow (hedged-read.ts); a JSON-RPC error that is the caller's answer (a revert,
 * invalid params) is never retried. `eth_sendRawTransaction` goes to every usable primary and the first acceptance
 * wins (broadcast.ts); calls whose state lives in one node go to the designated one. Every answer and failure feeds
 * the member's breaker and head (member-outcome.ts); the chain module's health checks do the rest.
 */
export class UpstreamPool implements Upstream, LogsPool, PoolState {
  readonly label: string;
  /** Told of every call to an upstream: its time and whether an answer came (metrics subscribe here). */
  onCall: ((upstream: string, seconds: number, answered: boolean) => void) | undefined;
  /** Where lag is measured from (the chain module's `lagFrom`); absent: the best head. */
  lagFrom: (() => number | undefined) | undefined;
  /** The newest block a caller has been shown (the network's head, read-your-writes); absent: not known here. */
  seenHead: (() => number | undefined) | undefined;
  /**
   * Reads a member's chain id and settles `unconfirmed` (the chain module's `confirm`). Absent: no member is ever
   * unconfirmed (a pool without a chain module, as in unit tests).
   */
  confirm: ((m: UpstreamMember) => Promise<void>) | undefined;
  /**
   * Blocks above a member's head that an answer to a caller may show before the member's chain id is read again
   * (the node behind its URL may be another chain's); undefined: never (an embedded chain, which mines any number
   * at once, or a pool without a chain module).
   */
  jumpBlocks: number | undefined;

  constructor(
    readonly members: readonly UpstreamMember[],
    readonly policy: HealthPolicy,
    /** The best head among usable upstreams (the chain module's). */
    readonly best: () => number | undefined,
    readonly log: Logger,
    /** The clock breakers and rests are read by (tests pass their own, so no test waits or races real time). */
    readonly now: () => number = Date.now,
    /** What says when a read is due a hedge (tests pass their own and fire it themselves). */
    readonly clock: Pick<CoarseClock, 'add' | 'remove'> = coarseClock,
  ) {
    this.label = members.map((m) => m.label).join(', ');
    this.signers = members.filter((m) => m.config.signer !== undefined).sort((a, b) => a.config.signer! - b.config.signer!);
    this.bounded = members.some((m) => m.room !== undefined);
    this.lacking = members.some((m) => m.gapList(this.now()) !== undefined);
    this.guarded = this.bounded || this.lacking;
    this.logsBounded = members.some((m) => m.logsRange !== undefined || m.logsCutAt !== undefined);
    this.logs = new LogsSplit(this, policy.logsPieces, policy.maxAnswerBytes);
    this.windowed = members.some((m) => Object.values(m.holding).some((h) => h.from > 0 || h.at !== undefined));
  }

  /** Some member has its own rate or concurrency (upstreams[].rate, .concurrency): reads look for room. */
  readonly bounded: boolean;
  /** Some member lacks methods (configured, or learnt from its answers): reads skip it for those. */
  lacking: boolean;
  /** `bounded` or `lacking`: reads have something to heed beyond health (false: no work for either per call). */
  guarded: boolean;
  /** Some member has a known eth_getLogs range, or a configured result bound: ranges are looked at before they go. */
  logsBounded: boolean;
  /** eth_getLogs over ranges wider than some members take (logs-split.ts). */
  private readonly logs: LogsSplit;
  /** Reads waiting for room at members at their own bounds: woken when a call to such a member ends (room-wait.ts). */
  roomWait: RoomWait | undefined;

  /** Upstreams that hold the same accounts, in the order designated calls try them (`signer`). */
  readonly signers: readonly UpstreamMember[];
  /** The network's name, for the errors that name it (the chain module's). */
  network = '';
  /**
   * Some member is known to hold less than every block's state or history (configured, probed or learnt:
   * holdings.ts): calls at a block look at who holds it. False: no work per call for it.
   */
  windowed = false;
  /** Calls sent since start: background probes skip a network nobody calls (chain/holdings-probe.ts). */
  calls = 0;
  /** Checks answers before they are passed on (networks.<n>.verify); absent: off, or an embedded chain. */
  verifier: Verifier | undefined;
  /** Blocks read for the verifier's headers (each a call a node counts), for /metrics. */
  headerReads = 0;
  /** Told of every answer that failed verification: the member's label and the check (metrics subscribe here). */
  onVerifyFailure: ((upstream: string, check: string) => void) | undefined;
  /** Block numbers by hash, as answers showed them, while some member holds less than every block (`windowed`). */
  readonly numbers = new Map<string, number>();

  /** What member `m` holds of `kind` is now `h` (a probe, an answer): routing heeds it from the next call. */
  setHeld(m: UpstreamMember, kind: 'state' | 'history', h: Holding): void {
    m.holding = { ...m.holding, [kind]: h };
    if (h.from > 0 || h.at !== undefined) this.windowed = true;
  }

  call(method: string, params: unknown[], timeoutMs: number, route: Route = {}, spec: MethodFacts = describe(method)): Promise<UpstreamAnswer> {
    this.calls++;
    if (spec.splitsRange) return this.logs.call(spec, params, timeoutMs, route);
    // The usual case first: one member with nothing to heed (no bounds, no gaps, no answer to check) goes straight to it.
    if (this.members.length === 1 && !this.guarded && (spec.verify === undefined || this.verifier === undefined)) return this.sentVia(answeredBy(route, this.members[0]), spec, params, timeoutMs, route.signal, route.background ? BACKGROUND : ATTEMPT);
    return this.send(spec, params, timeoutMs, route);
  }

  /** A call as one (LogsPool): one member with nothing to heed goes straight to it; writes as they route; reads by `read`. */
  send(spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route): Promise<UpstreamAnswer> {
    const signal = route.signal;
    if (this.members.length === 1 && !this.guarded && (spec.verify === undefined || this.verifier === undefined)) return this.sentVia(answeredBy(route, this.members[0]), spec, params, timeoutMs, signal, route.background ? BACKGROUND : ATTEMPT);
    if (spec.route === 'broadcast') return broadcast(this, spec, params, timeoutMs, signal);
    if (spec.route === 'designated') return this.sentVia(answeredBy(route, designated(this)), spec, params, timeoutMs, signal);
    return this.read(spec, params, timeoutMs, route, signal);
  }

  /** The network's head, for a split eth_getLogs's `latest` (LogsPool). */
  head(): number | undefined {
    return this.seenHead?.() ?? this.best();
  }

  /** The number of the block `tag` names, as a node answers (LogsPool). */
  async blockNumber(tag: string, timeoutMs: number, route: Route): Promise<number | undefined> {
    const a = await this.call('eth_getBlockByNumber', [tag, false], timeoutMs, route);
    const n = (a.result as { number?: unknown } | null | undefined)?.number;
    return typeof n === 'string' && /^0x[0-9a-fA-F]{1,16}$/.test(n) ? Number.parseInt(n.slice(2), 16) : undefined;
  }

  /**
   * A read, asked of each other usable member in turn when its outcome is retryable (`retried`): the caller gets
   * the first answer to pass on; when none gives one, the first's answer or the last failure (BLOCK_NOT_HELD for a
   * block some node lacks). A result is verified first (networks.<n>.verify).
   */
  private async read(spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route, signal?: CallSignal): Promise<UpstreamAnswer> {
    if (this.lacking && noneHas(this, spec.name)) return { error: new GatewayError('METHOD_NOT_FOUND', { method: spec.name }).toJSON() };
    if (this.windowed) route = byHashHeld(this, spec, params, route);
    if (this.windowed && route.needs !== undefined) heldByOne(this, route, spec.name);
    let first = pick(this, route, undefined, spec.name);
    if (this.bounded && !first.hasRoom(this.now())) first = await roomFor(this, route, spec.name, signal);
    try {
      const hedge = this.policy.hedge;
      const got = hedge && hedge.maxMs > 0 && !spec.trace
        ? await hedged(this, first, hedge, spec, params, timeoutMs, route, signal)
        : await this.attempt(first, spec, params, timeoutMs, signal, route.background ? BACKGROUND : ATTEMPT);
      if (got.member) first = got.member;
      answeredBy(route, first);
      if (mayBeLag(spec, got.answer.result) && !signal?.aborted) return fromAhead(this, first, got.answer, spec, params, timeoutMs, route, signal);
      if (got.outcome.kind === 'not-supported' && this.members.length > 1 && !signal?.aborted) return elsewhere(this, first, got.answer, spec, params, timeoutMs, route, signal);
      if (this.verifier !== undefined && spec.verify !== undefined && got.answer.error === undefined) {
        const checked = this.verifier.check(spec.verify, params, got.answer.result, first);
        const failed = checked instanceof Promise ? await checked : checked;
        if (failed !== undefined) return answerOfPiece(route, await reverified(this, { ...got, member: first }, failed, spec, params, timeoutMs, route));
      }
      if (!got.outcome.retry || signal?.aborted) return got.answer;
      return answerOfPiece(route, await retried(this, first, got, undefined, spec, params, timeoutMs, route));
    } catch (err) {
      if (!classifyFailure(err).retry || signal?.aborted) throw err; // out of time, or nobody waits: no other node
      return answerOfPiece(route, await retried(this, first, undefined, err, spec, params, timeoutMs, route));
    }
  }

  /**
   * One piece of a split eth_getLogs (logs-split.ts): a read as any other, asked of the other members in turn when
   * retryable, with who answered and what the answer says. Not hedged: a piece is heavy, and each is a call a
   * provider counts.
   */
  async piece(spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route): Promise<Piece> {
    const signal = route.signal;
    if (this.windowed && route.needs !== undefined) heldByOne(this, route, spec.name);
    let first = pick(this, route, undefined, spec.name);
    if (this.bounded && !first.hasRoom(this.now())) first = await roomFor(this, route, spec.name, signal);
    let got: Attempt;
    try {
      got = await this.attempt(first, spec, params, timeoutMs, signal, LOG_PIECE);
    } catch (err) {
      if (!classifyFailure(err).retry || signal?.aborted) throw err;
      return retried(this, first, undefined, err, spec, params, timeoutMs, route);
    }
    if (this.verifier !== undefined && spec.verify !== undefined && got.answer.error === undefined) {
      const checked = this.verifier.check(spec.verify, params, got.answer.result, first);
      const failed = checked instanceof Promise ? await checked : checked;
      if (failed !== undefined) return reverified(this, { ...got, member: first }, failed, spec, params, timeoutMs, route);
    }
    if (!got.outcome.retry || signal?.aborted) return { ...got, member: first };
    return retried(this, first, got, undefined, spec, params, timeoutMs, route);
  }

  /**
   * One call to one member, its outcome recorded (see `attempt`); the answer as the caller may see it (the chain
   * module's own reads: background unless `why` says otherwise). Its own
   * `then`, not `attempt(...).then(a => a.answer)`: every call of a network with one upstream passes here, and a
   * promise less per call is a share of a batch item's CPU.
   */
  via(m: UpstreamMember, method: string, params: unknown[], timeoutMs: number, signal?: CallSignal, why: Purpose = BACKGROUND): Promise<UpstreamAnswer> {
    return this.sentVia(m, describe(method), params, timeoutMs, signal, why);
  }

  /** As `via`, for a call whose method facts are at hand (a client's first try unless `why` says otherwise). */
  sentVia(m: UpstreamMember, spec: MethodFacts, params: unknown[], timeoutMs: number, signal?: CallSignal, why: Purpose = ATTEMPT): Promise<UpstreamAnswer> {
    const t0 = performance.now();
    return this.sent(m, spec, params, timeoutMs, signal, why).then((a) => answerOf(answered(this, m, spec, params, a, performance.now() - t0)), (err) => notAnswered(this, m, spec, err, t0));
  }

  /**
   * One call to one member, classified once (upstream/classify.ts) and recorded (member-outcome.ts): a success
   * closes its breaker and shows its head; a failure counts against it (with a rest when the node asked for one: a
   * 429's Retry-After, a capacity error); a neutral outcome (missing data, the gateway's own refusal) leaves it as it
   * was. A node error's internals (a `stack`) are dropped there, so no upstream's reaches a caller. One `then`, not
   * an async function (every call passes here: a promise less).
   */
  attempt(m: UpstreamMember, spec: MethodFacts, params: unknown[], timeoutMs: number, signal?: CallSignal, why: Purpose = ATTEMPT): Promise<Attempt> {
    const t0 = performance.now();
    return this.sent(m, spec, params, timeoutMs, signal, why).then((a) => answered(this, m, spec, params, a, performance.now() - t0), (err) => notAnswered(this, m, spec, err, t0));
  }

  /**
   * A check of member `m` by the chain module (its chain id, its head, a block): as `via`, but sent even while its
   * chain id is not confirmed (the check is what confirms it), and within `timeoutMs` whatever the member's own
   * time-out, so that one stalled node does not hold a round of checks for its calls' time-out.
   */
  probe(m: UpstreamMember, method: string, params: unknown[], timeoutMs: number): Promise<UpstreamAnswer> {
    const t0 = performance.now();
    const spec = describe(method);
    return this.sent(m, spec, params, timeoutMs, undefined, BACKGROUND, true).then((a) => answerOf(answered(this, m, spec, params, a, performance.now() - t0, true)), (err) => notAnswered(this, m, spec, err, t0));
  }

  /**
   * The call on its way to member `m` (a light read may share a node request with other callers'). A member whose
   * chain id is not confirmed takes it only once it is (its read is shared with the others waiting); not confirmed
   * (another chain, or no answer), the call fails as a node that did not answer, and a read is asked elsewhere.
   */
  private sent(m: UpstreamMember, spec: MethodFacts, params: unknown[], timeoutMs: number, signal: CallSignal | undefined, why: Purpose, check = false): Promise<UpstreamAnswer> {
    if (m.unconfirmed && !check) return this.afterConfirmed(m, spec, params, timeoutMs, signal, why);
    const room = m.room;
    // Counted as it goes out (a call shared in a batch is one the provider bills too).
    m.spend.add(why, spec.name);
    if (room === undefined) {
      m.starting(this.now());
      try {
        return m.upstream.call(spec.name, params, check ? timeoutMs : m.timeoutFor(spec.trace, timeoutMs), optionsOf(m, spec, params, signal));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    const now = this.now();
    m.starting(now);
    // Counted against its own bounds (writes too, though only reads wait for room; checks against its rate only).
    const holds = !check;
    room.take(now, holds);
    try {
      const sent = m.upstream.call(spec.name, params, check ? timeoutMs : m.timeoutFor(spec.trace, timeoutMs), optionsOf(m, spec, params, signal));
      return holds ? sent.finally(() => roomMade(this, room)) : sent;
    } catch (err) {
      if (holds) roomMade(this, room);
      return Promise.reject(err);
    }
  }

  private async afterConfirmed(m: UpstreamMember, spec: MethodFacts, params: unknown[], timeoutMs: number, signal: CallSignal | undefined, why: Purpose): Promise<UpstreamAnswer> {
    if (!m.refused) await this.confirm?.(m);
    if (m.unconfirmed) {
      throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: m.refused ? (m.lastError ?? 'it serves another chain') : 'the node has not answered its chain id' });
    }
    return this.sent(m, spec, params, timeoutMs, signal, why);
  }

  /** Records a member's failure to answer (`err` from the upstream client); logs when that opened its breaker. */
  failed(m: UpstreamMember, err: unknown): void {
    record(this, m, classifyFailure(err), err);
  }

  /** The member for the next read (member-choice.ts `pick`): never undefined. */
  pick(route: Route, not?: UpstreamMember, method?: string): UpstreamMember {
    return pick(this, route, not, method);
  }

  /** The widest eth_getLogs range the members that would take `route` accept (LogsPool; member-choice.ts). */
  rangeFor(route: Route, method: string): number | undefined {
    return rangeFor(this, route, method);
  }

  /** The upstream for calls whose state lives in one node (member-choice.ts `designated`). */
  designated(): UpstreamMember {
    return designated(this);
  }

  /** Block `n` was seen only on members that stopped answering (holdings-route.ts `onlyLostHave`). */
  onlyLostHave(n: number, route: Route): boolean {
    return onlyLostHave(this, n, route);
  }

  /** Block `n` for the verifier, from members other than `not` first (verified-read.ts `readBlock`). */
  readBlock(n: number, not: unknown, sound: (b: Record<string, unknown>) => boolean, timeoutMs: number): Promise<Record<string, unknown> | 'unsound' | undefined> {
    return readBlock(this, n, not, sound, timeoutMs);
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => m.upstream.close()));
  }
}

/** An attempt's answer; an attempt still waiting on its member's chain id (a head jump), once that is read. */
const answerOf = (got: Attempt | Promise<Attempt>): UpstreamAnswer | Promise<UpstreamAnswer> => (got instanceof Promise ? got.then((g) => g.answer) : got.answer);

/** `m`, written where the route asks for the label of the upstream that answers (Route.answered). */
function answeredBy(route: Route, m: UpstreamMember): UpstreamMember {
  if (route.answered !== undefined) route.answered.node = m.label;
  return m;
}

/** A piece's answer, its member written where the route asks for it. */
function answerOfPiece(route: Route, p: Piece): UpstreamAnswer {
  answeredBy(route, p.member);
  return p.answer;
}
