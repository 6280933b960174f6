import { performance } from 'node:perf_hooks'; // the global one is a getter on globalThis, called at each use
import { CallAbort, type CallSignal } from '../errors/on-abort.ts';
import { CallAborted } from '../errors/call-aborted.ts';
import { coarseClock, type CoarseClock, type Due } from '../background/coarse-clock.ts';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import type { Logger } from 'pino';
import { classifyAnswer, classifyFailure, forCaller, UNVERIFIED, type Outcome } from '../upstream/classify.ts';
import type { Verifier } from './verify/verifier.ts';
import type { CallOptions, Upstream, UpstreamAnswer } from '../upstream/upstream.ts';
import { callerGone } from '../errors/call-aborted.ts';
import { blockSeenIn } from './block-seen.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import { describe } from '../methods/specs.ts';
import { learnRange, LogsSplit, type LogsPool, type Piece } from './logs-split.ts';
import { learnt, oldestHeld, type Holding } from './holdings.ts';
import { notHeld } from './not-held.ts';
import type { Route } from './route.ts';
import type { HealthPolicy, UpstreamMember } from './upstream-member.ts';
import { ATTEMPT, BACKGROUND, HEDGE, LOG_PIECE, RETRY, VERIFY, type Purpose } from './upstream-spend.ts';

export type { Route } from './route.ts';

/**
 * An answer that may only say the node has not caught up (the method's spec says when, src/methods/specs.ts): a
 * `null` by hash, or a transaction by hash still pending (no block) on a node behind the one that mined it (a
 * transaction read back as pending after its receipt had been seen). Not an answer to pass on.
 */
const mayBeLag = (spec: MethodFacts, result: unknown): boolean =>
  result === null ? spec.nullMayBeLag : spec.pendingMayBeLag === true && typeof result === 'object' && (result as { blockNumber?: unknown }).blockNumber == null;

/** A light read (MethodFacts.light) may share a node request; a block asked with its full transactions may not. */
const isLight = (spec: MethodFacts, params: unknown[]) => spec.light && !(spec.fullTransactions !== undefined && params[spec.fullTransactions] === true);

/**
 * What the node's client is told of a call (upstream/upstream.ts): a light read may share a node request; a call that
 * runs code goes over the node's WebSocket, if any (upstream/ws-lane.ts; one answer over rpc.maxAnswerBytes closes
 * the socket and such calls keep to HTTP for a while); a trace shares a node request only with traces; a write is
 * journaled first by an embedded chain.
 */
const optionsOf = (m: UpstreamMember, spec: MethodFacts, params: unknown[], signal: CallSignal | undefined): CallOptions | undefined =>
  m.config.shareReads !== false && isLight(spec, params) ? { signal, light: true }
    : spec.overSocket ? { signal, socket: true }
      : spec.trace ? { signal, trace: true }
        : spec.write ? { signal, write: spec.write }
          : signal && { signal };

/** A node that already has the transaction: for a broadcast, as good as accepting it. */
const ALREADY_KNOWN = /already known|known transaction|already imported|transaction already exists/i;

/**
 * The upstreams of one network (docs/decisions.md §9), as one `Upstream`: reads go to a usable upstream (primaries by
 * weight, then fallbacks) and are asked of the others in turn when the outcome says so (upstream/classify.ts: no
 * answer, a 5xx, a 429 or a time-out, a node's capacity error, a node missing the block or state); a JSON-RPC error
 * that is the caller's answer (a revert, invalid params) is never retried. `eth_sendRawTransaction` goes to every
 * usable primary and the first acceptance wins; calls whose state lives in one node go to the designated one.
 * Every answer and failure feeds the member's breaker and head; the chain module's health checks do the rest.
 */
export class UpstreamPool implements Upstream, LogsPool {
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
    private readonly policy: HealthPolicy,
    /** The best head among usable upstreams (the chain module's). */
    private readonly best: () => number | undefined,
    private readonly log: Logger,
    /** The clock breakers and rests are read by (tests pass their own, so no test waits or races real time). */
    private readonly now: () => number = Date.now,
    /** What says when a read is due a hedge (tests pass their own and fire it themselves). */
    private readonly clock: Pick<CoarseClock, 'add' | 'remove'> = coarseClock,
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
  private readonly bounded: boolean;
  /** Some member lacks methods (configured, or learnt from its answers): reads skip it for those. */
  private lacking: boolean;
  /** `bounded` or `lacking`: reads have something to heed beyond health (false: no work for either per call). */
  private guarded: boolean;
  /** Some member has a known eth_getLogs range, or a configured result bound: ranges are looked at before they go. */
  logsBounded: boolean;
  /** eth_getLogs over ranges wider than some members take (logs-split.ts). */
  private readonly logs: LogsSplit;
  /** Reads waiting for room at members at their own bounds: woken when a call to such a member ends. */
  private roomWait: { promise: Promise<void>; wake: () => void } | undefined;

  /** Upstreams that hold the same accounts, in the order designated calls try them (`signer`). */
  private readonly signers: readonly UpstreamMember[];
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
    if (spec.route === 'broadcast') return this.broadcast(spec, params, timeoutMs, signal);
    if (spec.route === 'designated') return this.sentVia(answeredBy(route, this.designated()), spec, params, timeoutMs, signal);
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
    if (this.lacking && this.noneHas(spec.name)) return { error: new GatewayError('METHOD_NOT_FOUND', { method: spec.name }).toJSON() };
    if (this.windowed) route = this.byHashHeld(spec, params, route);
    if (this.windowed && route.needs !== undefined) this.heldByOne(route, spec.name);
    let first = this.pick(route, undefined, spec.name);
    if (this.bounded && !first.hasRoom(this.now())) first = await this.roomFor(route, spec.name, signal);
    try {
      const hedge = this.policy.hedge;
      const got = hedge && hedge.maxMs > 0 && !spec.trace
        ? await this.hedged(first, hedge, spec, params, timeoutMs, route, signal)
        : await this.attempt(first, spec, params, timeoutMs, signal, route.background ? BACKGROUND : ATTEMPT);
      if (got.member) first = got.member;
      answeredBy(route, first);
      if (mayBeLag(spec, got.answer.result) && !signal?.aborted) return this.fromAhead(first, got.answer, spec, params, timeoutMs, route, signal);
      if (got.outcome.kind === 'not-supported' && this.members.length > 1 && !signal?.aborted) return this.elsewhere(first, got.answer, spec, params, timeoutMs, route, signal);
      if (this.verifier !== undefined && spec.verify !== undefined && got.answer.error === undefined) {
        const checked = this.verifier.check(spec.verify, params, got.answer.result, first);
        const failed = checked instanceof Promise ? await checked : checked;
        if (failed !== undefined) return answerOfPiece(route, await this.reverified({ ...got, member: first }, failed, spec, params, timeoutMs, route));
      }
      if (!got.outcome.retry || signal?.aborted) return got.answer;
      return answerOfPiece(route, await this.retried(first, got, undefined, spec, params, timeoutMs, route));
    } catch (err) {
      if (!classifyFailure(err).retry || signal?.aborted) throw err; // out of time, or nobody waits: no other node
      return answerOfPiece(route, await this.retried(first, undefined, err, spec, params, timeoutMs, route));
    }
  }


  /**
   * A read to `first`, also sent to a second usable member if `first` has not answered within its usual time
   * (`hedgeAfter`: a node stopped with SIGSTOP held every reader for seconds): the first answer that is
   * not to be retried wins and the other call is aborted (its node request too, when nothing else waits on it). A
   * `first` overtaken by the hedge counts as a failure to answer, so a stalled node's breaker opens after
   * `breakerFailures` reads in a row overtaken and it takes no more reads, while any answer it gives resets that.
   * When both fail, the last failure; a retryable answer stands when the other call failed.
   */
  private hedged(first: UpstreamMember, hedge: { minMs: number; maxMs: number }, spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route, signal?: CallSignal): Promise<Attempt> {
    return new Promise((resolve, reject) => {
      let done = false;
      let running = 1;
      let kept: Attempt | undefined;
      const calls: Raced[] = [];
      const finish = (got: Attempt | undefined, err?: unknown) => {
        done = true;
        this.clock.remove(timer);
        for (const c of calls) if (c.member !== got?.member) c.stop();
        if (got) resolve(got);
        else reject(err);
      };
      const run = (m: UpstreamMember) => {
        const call = new Raced(m, signal);
        calls.push(call);
        this.attempt(m, spec, params, timeoutMs, call.signal, m !== first ? HEDGE : route.background ? BACKGROUND : ATTEMPT).then((got) => {
          call.release();
          if (done) return;
          running--;
          if (got.outcome.retry && running > 0) return void (kept = { ...got, member: m });
          // The hedge answered while `first` still says nothing: `first` did not answer in its usual time.
          if (m !== first && !calls[0].over) this.record(first, { kind: 'timeout', retry: true, breaker: 'failure' }, new Error(`overtaken by ${m.label}: no answer in ${Math.round(timer.afterMs)} ms`));
          finish({ ...got, member: m });
        }, (err) => {
          call.release();
          if (done) return;
          running--;
          if (running > 0) return;
          if (kept) finish(kept);
          else finish(undefined, err);
        });
      };
      const timer: Due & { afterMs: number } = {
        afterMs: first.hedgeAfter(hedge.minMs, hedge.maxMs),
        dueAt: 0,
        due: () => {
          if (done || signal?.aborted) return;
          const best = this.best();
          const lagFrom = this.lagFrom?.() ?? best;
          const now = this.now();
          const second = this.pick(route, first, spec.name);
          if (second === first || !second.usable(best, this.policy, now, lagFrom) || !second.hasRoom(now)) return;
          running++;
          run(second);
        },
      };
      timer.dueAt = performance.now() + timer.afterMs;
      this.clock.add(timer);
      run(first);
    });
  }

  /**
   * A `null` (or a pending transaction) from a node that may only not have it yet: asked once of another node that
   * may have it, whose answer stands. Such a node is one ahead of `first` by what the gateway knows of their heads,
   * or, when `first` is behind the block a caller was already shown (read-your-writes), any other node: its own head
   * may be read a moment late. Nodes that take calls come first, the furthest ahead first; else a node whose breaker
   * is open but that serves this chain (it may be slow, not gone), asked within the hedge's bound so that a dead node
   * does not hold the caller. A node at the front's null, or no such node, is the answer.
   */
  private async fromAhead(first: UpstreamMember, answer: UpstreamAnswer, spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route, signal?: CallSignal): Promise<UpstreamAnswer> {
    const best = this.best();
    const lagFrom = this.lagFrom?.() ?? best;
    const now = this.now();
    const seen = this.seenHead?.();
    const behindSeen = seen !== undefined && (first.head === undefined || first.head < seen);
    // A node that holds less history than another (pruned receipts, EIP-4444) may lack an old block or transaction
    // the other has: its null is asked of a node whose history reaches further back.
    const head = this.head();
    const history = (m: UpstreamMember) => (m.holding.history === undefined ? 0 : oldestHeld(m.holding.history, head));
    const firstHistory = this.windowed ? history(first) : 0;
    let ahead: UpstreamMember | undefined;
    let open: UpstreamMember | undefined;
    for (const m of this.members) {
      const has = reached(m);
      if (m === first || m.unconfirmed || m.forked || has < 0 || m.resting(now)) continue;
      if (!behindSeen && first.head !== undefined && has <= first.head && !(firstHistory > 0 && history(m) < firstHistory)) continue;
      if (!route.dedicated && m.config.role === 'dedicated') continue;
      if (m.usable(best, this.policy, now, lagFrom)) {
        if (ahead === undefined || has > reached(ahead)) ahead = m;
      } else if (m.breaker(now) !== 'closed' && !m.suspect(best) && (open === undefined || has > reached(open))) {
        open = m;
      }
    }
    const other = ahead ?? open;
    if (!other) return answer;
    try {
      const ms = ahead ? timeoutMs : Math.min(timeoutMs, this.policy.hedge?.maxMs || 1000);
      return await this.sentVia(other, spec, params, ms, signal, RETRY);
    } catch {
      return answer;
    }
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

  private sentVia(m: UpstreamMember, spec: MethodFacts, params: unknown[], timeoutMs: number, signal?: CallSignal, why: Purpose = ATTEMPT): Promise<UpstreamAnswer> {
    const t0 = performance.now();
    return this.sent(m, spec, params, timeoutMs, signal, why).then((a) => answerOf(this.answered(m, spec, params, a, performance.now() - t0)), (err) => this.notAnswered(m, spec, err, t0));
  }

  /**
   * One call to one member, classified once (upstream/classify.ts) and recorded: a success closes its breaker and
   * shows its head; a failure counts against it (with a rest when the node asked for one: a 429's Retry-After, a
   * capacity error); a neutral outcome (missing data, the gateway's own refusal) leaves it as it was. A node
   * error's internals (a `stack`) are dropped here, so no upstream's reaches a caller. One `then`, not an async
   * function (every call passes here: a promise less).
   */
  private attempt(m: UpstreamMember, spec: MethodFacts, params: unknown[], timeoutMs: number, signal?: CallSignal, why: Purpose = ATTEMPT): Promise<Attempt> {
    const t0 = performance.now();
    return this.sent(m, spec, params, timeoutMs, signal, why).then((a) => this.answered(m, spec, params, a, performance.now() - t0), (err) => this.notAnswered(m, spec, err, t0));
  }

  /**
   * A check of member `m` by the chain module (its chain id, its head, a block): as `via`, but sent even while its
   * chain id is not confirmed (the check is what confirms it), and within `timeoutMs` whatever the member's own
   * time-out, so that one stalled node does not hold a round of checks for its calls' time-out.
   */
  probe(m: UpstreamMember, method: string, params: unknown[], timeoutMs: number): Promise<UpstreamAnswer> {
    const t0 = performance.now();
    const spec = describe(method);
    return this.sent(m, spec, params, timeoutMs, undefined, BACKGROUND, true).then((a) => answerOf(this.answered(m, spec, params, a, performance.now() - t0, true)), (err) => this.notAnswered(m, spec, err, t0));
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
      return holds ? sent.finally(() => this.roomMade(room)) : sent;
    } catch (err) {
      if (holds) this.roomMade(room);
      return Promise.reject(err);
    }
  }

  /** A call to a bounded member is over: its slot is free, and reads waiting for room look again. */
  private roomMade(room: NonNullable<UpstreamMember['room']>): void {
    room.release();
    const waiting = this.roomWait;
    this.roomWait = undefined;
    waiting?.wake();
  }

  /**
   * A member with room for a read, when the one picked is at its own bounds (and so is every other it may use):
   * waits for a call to end or the rate to let one more go, at most `limitWaitMs` and never past the call's
   * deadline; then 503 UPSTREAMS_BUSY. Only networks with bounded members come here.
   */
  private async roomFor(route: Route, method: string, signal: CallSignal | undefined): Promise<UpstreamMember> {
    const until = performance.now() + (this.policy.limitWaitMs ?? 250);
    for (;;) {
      const now = this.now();
      const m = this.pick(route, undefined, method);
      if (m.hasRoom(now)) return m;
      if (signal?.aborted) throw signal.reason;
      const left = until - performance.now();
      if (left <= 0) throw new GatewayError('UPSTREAMS_BUSY');
      // The soonest the rate lets one of the members it may use have room; a call ending wakes it sooner.
      let soonest = left;
      for (const c of this.members) if (c.room && c.usable(this.best(), this.policy, now, this.lagFrom?.() ?? this.best())) soonest = Math.min(soonest, c.room.msUntilRoom(now));
      const wait = (this.roomWait ??= waiter());
      let timer: NodeJS.Timeout | undefined;
      let off: (() => void) | undefined;
      await new Promise<void>((resolve) => {
        timer = setTimeout(resolve, soonest);
        off = signal?.onAbort(resolve);
        void wait.promise.then(resolve);
      });
      clearTimeout(timer);
      off?.();
    }
  }

  /** Another member than `not` that may take the read now (usable, with room, not lacking it); undefined: none. */
  private another(route: Route, not: UpstreamMember, method: string): UpstreamMember | undefined {
    const m = this.pick(route, not, method);
    return m === not || !m.hasRoom(this.now()) || (this.lacking && m.lacks(method, this.now())) ? undefined : m;
  }

  /** Every member that could serve the network lacks `method` (configured, or said so lately). */
  private noneHas(method: string): boolean {
    const now = this.now();
    return this.members.every((m) => m.refused || m.lacks(method, now));
  }

  /**
   * Member `m` answered that it lacks the method (-32601, "does not exist"): it is not asked it again for a while,
   * and each other member that may have it is, in turn; the first that serves it answers. None: the last refusal,
   * which adapters answer on (net_peerCount, eth_mining) as from a single node.
   */
  private async elsewhere(m: UpstreamMember, answer: UpstreamAnswer, spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route, signal?: CallSignal): Promise<UpstreamAnswer> {
    let last = m;
    for (let tries = 1; tries < this.members.length && !signal?.aborted; tries++) {
      last.learnGap(spec.name, this.now());
      this.lacking = this.guarded = true;
      const next = this.another(route, last, spec.name);
      if (next === undefined) return answer;
      const got = await this.attempt(next, spec, params, timeoutMs, signal, RETRY);
      if (got.outcome.kind !== 'not-supported') return got.answer;
      answer = got.answer;
      last = next;
    }
    last.learnGap(spec.name, this.now());
    return answer;
  }

  /**
   * One piece of a split eth_getLogs (logs-split.ts): a read as any other, asked of the other members in turn when
   * retryable, with who answered and what the answer says. Not hedged: a piece is heavy, and each is a call a
   * provider counts.
   */
  async piece(spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route): Promise<Piece> {
    const signal = route.signal;
    if (this.windowed && route.needs !== undefined) this.heldByOne(route, spec.name);
    let first = this.pick(route, undefined, spec.name);
    if (this.bounded && !first.hasRoom(this.now())) first = await this.roomFor(route, spec.name, signal);
    let got: Attempt;
    try {
      got = await this.attempt(first, spec, params, timeoutMs, signal, LOG_PIECE);
    } catch (err) {
      if (!classifyFailure(err).retry || signal?.aborted) throw err;
      return this.retried(first, undefined, err, spec, params, timeoutMs, route);
    }
    if (this.verifier !== undefined && spec.verify !== undefined && got.answer.error === undefined) {
      const checked = this.verifier.check(spec.verify, params, got.answer.result, first);
      const failed = checked instanceof Promise ? await checked : checked;
      if (failed !== undefined) return this.reverified({ ...got, member: first }, failed, spec, params, timeoutMs, route);
    }
    if (!got.outcome.retry || signal?.aborted) return { ...got, member: first };
    return this.retried(first, got, undefined, spec, params, timeoutMs, route);
  }


  /**
   * The widest eth_getLogs range the members that would take `route` accept (LogsPool): those of the first role
   * with a usable member (with room, when some have), the widest of theirs, undefined when one of them takes any.
   */
  rangeFor(route: Route, method: string): number | undefined {
    const candidates = this.candidates(route, undefined, method);
    const list = candidates.roomy.length > 0 ? candidates.roomy : candidates.usable;
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
    for (const m of this.members) if (m.logsRange !== undefined && (narrowest === undefined || m.logsRange < narrowest)) narrowest = m.logsRange;
    return narrowest;
  }

  private async afterConfirmed(m: UpstreamMember, spec: MethodFacts, params: unknown[], timeoutMs: number, signal: CallSignal | undefined, why: Purpose): Promise<UpstreamAnswer> {
    if (!m.refused) await this.confirm?.(m);
    if (m.unconfirmed) {
      throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: m.refused ? (m.lastError ?? 'it serves another chain') : 'the node has not answered its chain id' });
    }
    return this.sent(m, spec, params, timeoutMs, signal, why);
  }

  /** Member `m` gave no answer (`err`, thrown on): recorded against it, unless its caller had left. */
  private notAnswered(m: UpstreamMember, spec: MethodFacts, err: unknown, t0: number): never {
    this.onCall?.(m.label, (performance.now() - t0) / 1000, false);
    // A caller that left says nothing of the node.
    if (callerGone(err)) m.settled();
    else this.record(m, classifyFailure(err), err, !spec.trace);
    throw err;
  }

  private answered(m: UpstreamMember, spec: MethodFacts, params: unknown[], answer: UpstreamAnswer, ms: number, check = false): Attempt | Promise<Attempt> {
    this.onCall?.(m.label, ms / 1000, true);
    // A trace's time is the caller's work, not the node's usual pace (the hedge delay).
    if (!spec.trace) m.observe(ms);
    if (answer.error !== undefined) answer = { error: forCaller(answer.error) };
    const outcome = classifyAnswer(answer);
    // Sent before its connections dropped, answered after (maybe by the node now behind its address): it stands
    // only once the member's chain id is confirmed.
    if (m.unconfirmed && !check) return this.onceConfirmed(m, { answer, outcome });
    if (outcome.kind === 'too-wide' && spec.splitsRange) {
      learnRange(m, outcome.refusal, params);
      if (m.logsRange !== undefined) this.logsBounded = true;
    }
    this.record(m, outcome, answer.error && `the node answered ${answer.error.code} ${String(answer.error.message).slice(0, 200)}`);
    if (answer.error === undefined) {
      if (this.windowed && spec.seen === 'block' && !check) this.noteNumber(answer.result);
      const n = blockSeenIn(spec.name, params, answer.result);
      if (n !== undefined && !check && (m.shown === undefined || n > m.shown)) m.shown = n;
      if (n !== undefined && (m.head === undefined || n > m.head)) {
        // A block far above its own head, in an answer to a caller: the node behind its URL may be another chain's.
        // The answer waits until its chain id is read again (`jumpBlocks` undefined: an embedded chain, its own).
        if (!check && this.jumpBlocks !== undefined && m.head !== undefined && n > m.head + this.jumpBlocks) return this.jumped(m, n, { answer, outcome });
        m.head = n;
      }
    }
    return { answer, outcome };
  }

  /** A block in an answer: its number kept by its hash (a few thousand, the oldest go first). */
  private noteNumber(result: unknown): void {
    const b = result as { hash?: unknown; number?: unknown } | null;
    if (b === null || typeof b !== 'object' || typeof b.hash !== 'string' || typeof b.number !== 'string') return;
    if (this.numbers.size >= 4096) this.numbers.delete(this.numbers.keys().next().value!);
    this.numbers.set(b.hash.toLowerCase(), Number(b.number));
  }

  /**
   * Member `m` answered with block `n`, a jump from its head: it takes no call until its chain id is read again,
   * and this answer passes only if that read confirms it (else the call fails as unanswered: a read is asked elsewhere).
   */
  private async jumped(m: UpstreamMember, n: number, got: Attempt): Promise<Attempt> {
    this.log.info({ upstream: m.label, head: m.head, shown: n }, 'upstream head jumped; its chain id is read again');
    m.unconfirmed = true;
    await this.confirm?.(m);
    if (m.unconfirmed) throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: `its head jumped from ${m.head} to ${n} and its chain id is not confirmed` });
    if (m.head === undefined || n > m.head) m.head = n;
    return got;
  }

  private async onceConfirmed(m: UpstreamMember, got: Attempt): Promise<Attempt> {
    if (!m.refused) await this.confirm?.(m);
    if (m.unconfirmed) throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: m.refused ? (m.lastError ?? 'it serves another chain') : 'the node has not answered its chain id' });
    return got;
  }

  /** Records a member's failure to answer (`err` from the upstream client); logs when that opened its breaker. */
  failed(m: UpstreamMember, err: unknown): void {
    this.record(m, classifyFailure(err), err);
  }

  /** What an outcome does to the member's breaker. */
  private record(m: UpstreamMember, outcome: Outcome, err: unknown, timeoutOpens = false): void {
    if (outcome.breaker === 'success') {
      if (m.succeeded()) this.log.info({ upstream: m.label }, 'upstream answers again');
    } else if (outcome.breaker === 'failure') {
      // A call that got no answer in its time (not a trace, whose time is the caller's work): the node is stalled
      // or gone, and the breaker opens at once, not after more calls wait as long (a node under SIGSTOP
      // held every reader for seconds until three health checks had failed).
      const policy = timeoutOpens && outcome.kind === 'timeout' && this.members.length > 1 ? { ...this.policy, breakerFailures: 1 } : this.policy;
      if (m.failed(err, policy, this.now(), outcome.restMs)) {
        this.log.warn({ upstream: m.label, error: m.lastError }, 'upstream failing: breaker open');
        // It may come back as another node (a URL whose node was replaced): its chain id is read before it serves.
        if (this.confirm) m.unconfirmed = true;
      }
    } else {
      m.settled();
    }
  }

  /**
   * The member for the next read. Usable members first: dedicated ones for a dedicated key (if the network has
   * any), else primaries by weight, then fallbacks; with `minBlock`, only those whose head has that block. Members at
   * their own rate or concurrency come after those with room, so that a fallback takes the primaries' overflow;
   * with `method`, members that lack it are left out; with `span`, members known to take that eth_getLogs range
   * come first within a role. When none is usable, the least bad one anyway (a network with one dead upstream still
   * tries it): never undefined.
   */
  pick(route: Route, not?: UpstreamMember, method?: string): UpstreamMember {
    const { usable, roomy, gap, now } = this.guarded ? this.candidates(route, not, method) : this.healthy(not, route.minBlock);
    const has = this.windowed && route.needs !== undefined ? this.holder(route) : (m: UpstreamMember) => route.minBlock === undefined || (m.head !== undefined && m.head >= route.minBlock);
    const tiers = tiersOf(route);
    const chosen = (roomy !== usable && byRole(roomy, tiers, route, has)) || byRole(usable, tiers, route, has);
    if (chosen) return chosen;
    // Usable, but none has the block yet: the one with the highest head.
    const highest = usable.filter((m) => route.dedicated || m.config.role !== 'dedicated').sort((a, b) => (b.head ?? -1) - (a.head ?? -1))[0];
    if (highest) return highest;
    // Dedicated upstreams are capacity paid for by Dedicated keys: others get them only when nothing else is left.
    // A forked node is not even the least bad: its state at a height it shares a number with is another
    // branch's; with only forked nodes answering, a dead node's failure (503 -32002) is the answer.
    const others = this.members.filter((m) => m !== not && !m.refused && !m.forked && (route.dedicated || m.config.role !== 'dedicated') && !gap?.(m));
    return others.find((m) => m.breaker(now) !== 'open') ?? others[0] ?? not ?? this.members.find((m) => !m.forked) ?? this.members[0];
  }

  /** The members that may take a read now but `not`, where none has bounds or gaps (`candidates` without them). */
  private healthy(not: UpstreamMember | undefined, atBlock: number | undefined): { usable: UpstreamMember[]; roomy: UpstreamMember[]; gap: undefined; now: number } {
    const best = this.best();
    const lagFrom = this.lagFrom?.() ?? best;
    const now = this.now();
    const usable = this.members.filter((m) => m !== not && m.usable(best, this.policy, now, lagFrom, atBlock));
    return { usable, roomy: usable, gap: undefined, now };
  }

  /** The members a read may go to now (but `not`, and those lacking `method`), and of them those with room. */
  private candidates(route: Route, not: UpstreamMember | undefined, method: string | undefined) {
    const best = this.best();
    const lagFrom = this.lagFrom?.() ?? best;
    const now = this.now();
    const gap = this.lacking && method !== undefined ? (m: UpstreamMember) => m.lacks(method, now) : undefined;
    const usable = this.members.filter((m) => m !== not && m.usable(best, this.policy, now, lagFrom, route.minBlock) && !gap?.(m));
    const roomy = this.bounded ? usable.filter((m) => m.hasRoom(now)) : usable;
    return { usable, roomy, gap, now };
  }

  /**
   * A call by block hash that needs the block's history (eth_getBlockReceipts by hash, as indexers ask it), for a
   * block whose number an answer showed (`hashes`): routed as a call at that number, so that it goes to a node that
   * holds it rather than to one that answers `null`.
   */
  private byHashHeld(spec: MethodFacts, params: unknown[], route: Route): Route {
    if (route.needs !== undefined || spec.holds === undefined || spec.block === undefined || spec.block.by === 'filter') return route;
    const v = params[spec.block.index];
    const hash = typeof v === 'string' && v.length === 66 ? v : (v as { blockHash?: unknown } | null)?.blockHash;
    const n = typeof hash === 'string' ? this.numbers.get(hash.toLowerCase()) : undefined;
    return n === undefined ? route : { ...route, needs: spec.holds, oldest: n };
  }

  /** Block numbers by hash, as answers showed them, while some member holds less than every block (`windowed`). */
  private readonly numbers = new Map<string, number>();

  /** Whether a member has the call's block and holds what the call needs at its oldest block (`route.needs`). */
  private holder(route: Route): (m: UpstreamMember) => boolean {
    const head = this.head();
    const needs = route.needs!;
    const n = route.oldest ?? route.minBlock;
    return (m) => (route.minBlock === undefined || (m.head !== undefined && m.head >= route.minBlock)) && (n === undefined || m.holds(needs, n, head));
  }

  /**
   * Throws the catalogue's BLOCK_NOT_HELD when no member the call may use now holds what it needs at its block
   * (pruned nodes only, the archive node down): no node is asked what none holds.
   */
  private heldByOne(route: Route, method: string): void {
    const n = route.oldest ?? route.minBlock;
    if (n === undefined) return;
    const { usable } = this.candidates(route, undefined, method);
    const head = this.head();
    const allowed = usable.filter((m) => route.dedicated || m.config.role !== 'dedicated');
    if (allowed.some((m) => m.holds(route.needs!, n, head))) return;
    if (allowed.length === 0) return; // nobody answers at all: the usual least bad node and its failure
    throw notHeld(this.network, route.needs!, n, allowed, head);
  }

  /**
   * A read whose first node gave no answer to pass on (`got`: a capacity error, "missing trie node", "pruned";
   * `failure`: no answer at all, a 429): each other usable node with room (and, for a call at a block, that may
   * hold it) is asked in turn, and the first real answer stands; a node that says it lacks the block has that
   * learnt. When none is left: for a call at a block that some node lacks (it said so, or is known not to hold it),
   * BLOCK_NOT_HELD, never a node's words; otherwise the first node's answer, or the last failure.
   */
  private async retried(first: UpstreamMember, got: Attempt | undefined, failure: unknown, spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route): Promise<Piece> {
    const tried = new Set<UpstreamMember>([first]);
    const firstPiece: Piece | undefined = got && { ...got, member: first };
    let missing = got?.outcome.kind === 'missing-data';
    if (missing) this.learnNotHeld(first, route);
    for (;;) {
      if (route.signal?.aborted) break;
      let next = this.untried(route, tried, spec.name);
      // None usable left: the next least bad one is still asked once (a node a moment behind the head, as checks
      // see it), if it may hold the call's block.
      if (next === undefined && tried.size === 1) {
        const m = this.another(route, first, spec.name);
        if (m !== undefined && !tried.has(m) && (!this.windowed || route.needs === undefined || this.holder(route)(m))) next = m;
      }
      if (next === undefined) break;
      tried.add(next);
      try {
        const again = await this.attempt(next, spec, params, timeoutMs, route.signal, RETRY);
        if (this.verifier !== undefined && spec.verify !== undefined && again.answer.error === undefined) {
          const failed = await this.verifier.check(spec.verify, params, again.answer.result, next);
          // A doubt (logs-missing) with nothing to weigh it against: the answer stands.
          if (failed !== undefined && failed !== 'logs-missing') {
            this.unverified(next, failed);
            continue;
          }
        }
        if (!again.outcome.retry) return { ...again, member: next };
        if (again.outcome.kind === 'missing-data') {
          missing = true;
          this.learnNotHeld(next, route);
        }
      } catch (err) {
        if (!classifyFailure(err).retry || route.signal?.aborted) throw err;
        failure = err;
      }
    }
    const needs = route.needs;
    const n = route.oldest ?? route.minBlock;
    const head = this.head();
    const lacking = needs !== undefined && n !== undefined && (missing || this.members.some((m) => !m.holds(needs, n, head)));
    if (!route.signal?.aborted && lacking && head !== undefined && n! <= head) {
      const { usable } = this.candidates(route, undefined, spec.name);
      return { answer: { error: notHeld(this.network, needs, n!, usable, head).toJSON() }, outcome: GATEWAY_REFUSAL, member: first };
    }
    if (firstPiece) return firstPiece;
    throw failure;
  }


  /**
   * The answer `got` failed check `failed` (chain/verify/): it counts against its node's breaker, and each other
   * member is asked in turn; the first answer that passes (or a node's error, which is checked by no one) stands.
   * None: ANSWER_UNVERIFIED naming the check, never the wrong answer. `logs-missing` (no logs for a block whose
   * bloom admits the filter) is a doubt, not a lie: another node's answer that passes convicts the first node; one
   * that is as empty agrees with it and stands; with no other node, the first answer stands.
   */
  private async reverified(got: Piece, failed: string, spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route): Promise<Piece> {
    const first = got.member;
    const doubt = failed === 'logs-missing';
    if (!doubt) this.unverified(first, failed);
    const tried = new Set<UpstreamMember>([first]);
    for (;;) {
      if (route.signal?.aborted) throw route.signal.reason;
      const next = this.untried(route, tried, spec.name);
      if (next === undefined) {
        if (doubt) return got;
        throw new GatewayError('ANSWER_UNVERIFIED', { method: spec.name, network: this.network, check: failed });
      }
      tried.add(next);
      let again: Attempt;
      try {
        again = await this.attempt(next, spec, params, timeoutMs, route.signal, RETRY);
      } catch (err) {
        if (!classifyFailure(err).retry || route.signal?.aborted) throw err;
        continue;
      }
      if (again.answer.error !== undefined) {
        if (again.outcome.retry) continue;
        return { ...again, member: next };
      }
      const f = await this.verifier!.check(spec.verify!, params, again.answer.result, next);
      if (f === 'logs-missing' && doubt) return { ...again, member: next };
      if (f === undefined) {
        if (doubt) this.unverified(first, failed);
        return { ...again, member: next };
      }
      if (f !== 'logs-missing') this.unverified(next, f);
      if (!doubt || f !== 'logs-missing') failed = f;
    }
  }

  /** Member `m` answered something that failed check `check`: a failure for its breaker, counted for /readyz and /metrics. */
  private unverified(m: UpstreamMember, check: string): void {
    const counts = (m.verifyFailures ??= {});
    const first = counts[check] === undefined;
    counts[check] = (counts[check] ?? 0) + 1;
    this.onVerifyFailure?.(m.label, check);
    if (first) this.log.warn({ upstream: m.label, check }, 'upstream answer failed verification; asked elsewhere (counted in /readyz verifyFailures)');
    this.record(m, UNVERIFIED, new Error(`its answer failed verification (${check})`));
  }

  /**
   * Block `n` (header and transaction hashes) for the verifier: from up to two usable members other than `not` that
   * hold it, then `not`; each next one is also asked when the one before has not answered within its usual time
   * (`hedgeAfter`; 1 s when hedging is off), so that a stalled node does not hold the caller; the first `sound`
   * block wins (its hash its fields', the agreed one). A node whose block is not sound has its answer counted as
   * failing `block-hash`; `unsound` when every one that answered gave such a block.
   */
  readBlock(n: number, not: unknown, sound: (b: Record<string, unknown>) => boolean, timeoutMs: number): Promise<Record<string, unknown> | 'unsound' | undefined> {
    const head = this.head();
    const best = this.best();
    const lagFrom = this.lagFrom?.() ?? best;
    const now = this.now();
    // Nodes that failed checks before are asked after those that did not.
    const failed = (m: UpstreamMember) => (m.verifyFailures === undefined ? 0 : 1);
    const others = this.members.filter((m) => m !== not && m.usable(best, this.policy, now, lagFrom) && (m.head ?? -1) >= n && m.holds('history', n, head))
      .sort((a, b) => failed(a) - failed(b));
    // The node that answered is asked last, whatever its health: it has just shown it holds the block.
    const order = [...others.slice(0, 2), ...this.members.filter((m) => m === not)];
    const hedge = this.policy.hedge;
    return new Promise((resolve) => {
      let next = 0;
      let running = 0;
      let unsound = false;
      let done = false;
      const timer: Due = { dueAt: 0, due: () => ask() };
      const finish = (b: Record<string, unknown> | 'unsound' | undefined) => {
        done = true;
        this.clock.remove(timer);
        resolve(b);
      };
      const ask = () => {
        if (done) return;
        this.clock.remove(timer);
        if (next >= order.length) return running === 0 ? finish(unsound ? 'unsound' : undefined) : undefined;
        const m = order[next++];
        running++;
        this.headerReads++;
        if (next < order.length) {
          timer.dueAt = performance.now() + (hedge && hedge.maxMs > 0 ? m.hedgeAfter(hedge.minMs, hedge.maxMs) : 1000);
          this.clock.add(timer);
        }
        this.via(m, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false], timeoutMs, undefined, VERIFY).then((a) => {
          const b = a.result as Record<string, unknown> | null | undefined;
          if (done || !b || typeof b !== 'object') return;
          if (sound(b)) return finish(b);
          unsound = true;
          this.unverified(m, 'block-hash');
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

  /** A member the call may use that holds its block and was not tried yet, by the usual order; undefined: none. */
  private untried(route: Route, tried: ReadonlySet<UpstreamMember>, method: string): UpstreamMember | undefined {
    const { usable } = this.candidates(route, undefined, method);
    const now = this.now();
    const left = usable.filter((m) => !tried.has(m) && m.hasRoom(now) && (route.dedicated || m.config.role !== 'dedicated'));
    const has = this.windowed && route.needs !== undefined ? this.holder(route) : (m: UpstreamMember) => route.minBlock === undefined || (m.head ?? -1) >= route.minBlock;
    return byRole(left, tiersOf(route), route, has) ?? undefined;
  }

  /**
   * Member `m` said it does not hold the call's oldest block: kept in its holding (sliding with the head) unless
   * the block is near its head (a node a block behind says "header not found" too).
   */
  private learnNotHeld(m: UpstreamMember, route: Route): void {
    const n = route.oldest ?? route.minBlock;
    const kind = route.needs;
    if (n === undefined || kind === undefined || m.head === undefined || n > m.head - NEAR_HEAD) return;
    const h = learnt(m.holding[kind], n, false, this.head());
    if (h) {
      this.setHeld(m, kind, h);
      this.log.info({ upstream: m.label, kind, block: n, from: oldestHeld(h, this.head()) }, 'upstream does not hold the block; calls at it go to the others');
    }
  }

  /**
   * Block `n` was seen only on members that stopped answering (breaker open), and no usable member (of those the
   * route may use) has reached it. Not when a usable member's head is merely not read yet: heads are learnt from
   * checks and answers, a moment behind the nodes.
   */
  onlyLostHave(n: number, route: Route): boolean {
    const best = this.best();
    const lagFrom = this.lagFrom?.() ?? best;
    const now = this.now();
    let lost = false;
    for (const m of this.members) {
      if (m.refused || m.forked || m.head === undefined || m.head < n || (!route.dedicated && m.config.role === 'dedicated')) continue;
      if (m.breaker(now) === 'open') lost = true;
      else if (m.usable(best, this.policy, now, lagFrom)) return false;
    }
    return lost;
  }

  /**
   * The upstream for calls whose state lives in one node (its accounts and keys). Upstreams given a `signer` order
   * hold the same accounts: the first usable one in that order, so a signer that is down fails over to the next
   * (every eth_sendTransaction got 503 while the one signer was down); none usable, the first of them
   * (its failure is the caller's answer). Without signers, the first primary that is not refused, as before.
   */
  designated(): UpstreamMember {
    if (this.signers.length > 0) {
      const best = this.best();
      const lagFrom = this.lagFrom?.() ?? best;
      const now = this.now();
      return this.signers.find((m) => m.usable(best, this.policy, now, lagFrom)) ?? this.signers.find((m) => !m.refused) ?? this.signers[0];
    }
    return this.members.find((m) => m.config.role === 'primary' && !m.refused) ?? this.members[0];
  }

  /**
   * A raw transaction to every usable primary at once (none usable: the best member); the first acceptance is the
   * answer, and a node that already has it counts as one (its hash is the transaction's). Only when none accepts:
   * the first node's refusal (a JSON-RPC error, e.g. nonce too low), or 503 when no node answered at all.
   */
  private broadcast(spec: MethodFacts, params: unknown[], timeoutMs: number, signal?: CallSignal): Promise<UpstreamAnswer> {
    const best = this.best();
    const lagFrom = this.lagFrom?.() ?? best;
    let targets = this.members.filter((m) => m.config.role === 'primary' && m.usable(best, this.policy, this.now(), lagFrom));
    if (targets.length === 0) targets = [this.pick({})];
    return new Promise((resolve, reject) => {
      let left = targets.length;
      let done = false;
      let refusal: UpstreamAnswer | undefined;
      let failure: unknown;
      const settle = () => {
        if (--left > 0 || done) return;
        done = true;
        if (refusal) resolve(refusal);
        else reject(failure);
      };
      for (const m of targets) {
        this.sentVia(m, spec, params, timeoutMs, signal).then((a) => {
          if (!done && a.error === undefined) {
            done = true;
            return resolve(a);
          }
          if (!done && a.error && ALREADY_KNOWN.test(String(a.error.message)) && typeof params[0] === 'string') {
            done = true;
            return resolve({ result: txHash(params[0]) });
          }
          refusal ??= a;
          settle();
        }, (err) => {
          failure ??= err;
          settle();
        });
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => m.upstream.close()));
  }
}

/** A signed transaction's hash: keccak-256 of its bytes. */
function txHash(raw: string): string {
  return '0x' + bytesToHex(keccak_256(hexToBytes(raw.startsWith('0x') ? raw.slice(2) : raw)));
}

/** The outcome of the gateway's own answer (BLOCK_NOT_HELD): nobody's fault, not retried. */
const GATEWAY_REFUSAL: Outcome = { kind: 'gateway', retry: false, breaker: 'neutral' };

/** Blocks below a member's head within which its "header not found" may only mean it is a moment behind. */
const NEAR_HEAD = 8;

/** The newest block a member is known to have: its head, or a newer block its answers showed. */
const reached = (m: UpstreamMember): number => Math.max(m.head ?? -1, m.shown ?? -1);

/** An attempt's answer; an attempt still waiting on its member's chain id (a head jump), once that is read. */
const answerOf = (got: Attempt | Promise<Attempt>): UpstreamAnswer | Promise<UpstreamAnswer> => (got instanceof Promise ? got.then((g) => g.answer) : got.answer);

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

/** A promise that `wake` settles: how reads waiting for room hear that a call ended. */
function waiter(): { promise: Promise<void>; wake: () => void } {
  let wake!: () => void;
  const promise = new Promise<void>((r) => { wake = r; });
  return { promise, wake };
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

/** A member's call, its answer and outcome; `member` says which member answered when the read was hedged. */
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

interface Attempt {
  answer: UpstreamAnswer;
  outcome: Outcome;
  member?: UpstreamMember;
}

/**
 * One of a hedged read's calls: its own signal, aborted with the caller's or when the other call has won (as a
 * caller gone: the node is not to blame, attempt() leaves its breaker as it was).
 */
class Raced {
  readonly signal = new CallAbort();
  over = false;
  private readonly off: (() => void) | undefined;

  constructor(readonly member: UpstreamMember, parent: CallSignal | undefined) {
    this.signal.trace = parent?.trace;
    if (parent?.aborted) this.signal.abort(parent.reason);
    else if (parent) this.off = parent.onAbort(() => this.signal.abort(parent.reason));
  }

  /** The call has its answer or failure. */
  release(): void {
    this.over = true;
    this.off?.();
  }

  /** The other call won: this one is let go. */
  stop(): void {
    if (this.over) return;
    this.release();
    this.signal.abort(new CallAborted('caller_gone'));
  }
}

