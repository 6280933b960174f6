import type { Holds } from '../methods/method-spec.ts';
import type { Upstream } from '../upstream/upstream.ts';
import { EVERY_BLOCK, lastBlocks, oldestHeld, type Holdings } from './holdings.ts';
import { MethodGaps } from './method-gaps.ts';
import { UpstreamRoom } from './upstream-room.ts';
import { UpstreamSpend, type UnitPrices } from './upstream-spend.ts';

export type UpstreamRole = 'primary' | 'fallback' | 'dedicated';

/** What the operator said about one upstream of a network (config `networks.<name>.upstreams[]`). */
export interface MemberConfig extends UnitPrices {
  role: UpstreamRole;
  /** Share of the reads among upstreams of the same role (default 1). */
  weight: number;
  /** Time-out of a call to this upstream, ms; overrides rpc.timeoutMs. */
  timeoutMs?: number;
  /** Time-out of a `debug_*` call to this upstream, ms; overrides rpc.debugTimeoutMs. */
  debugTimeoutMs?: number;
  /** Its place among the upstreams that hold the same accounts (designated calls try them in this order). */
  signer?: number;
  /** Light reads of different callers may share one batch to it (absent: they may). */
  shareReads?: boolean;
  /** Its own bounds, as a provider's plan sells them: calls a second and calls in flight (0 or absent: none). */
  rate?: number;
  concurrency?: number;
  /** Its eth_getLogs bounds (0 or absent: none known). */
  getLogs?: { maxBlockRange: number; maxResults: number };
  /** Methods it does not serve: names, or a prefix and `*`. */
  lacks?: readonly string[];
  /** It holds the state and history of every block (never probed). */
  archive?: boolean;
  /** It holds the state of the last this many blocks (0 or absent: probed). */
  stateWindow?: number;
}

/** Breaker thresholds and lag bound (config `upstreams`). */
export interface HealthPolicy {
  /** Failures in a row (calls or health checks) that open the breaker. */
  breakerFailures: number;
  /** How long an open breaker keeps the upstream out before one trial call (half-open), ms. */
  breakerCooldownMs: number;
  /** An upstream more than this many blocks behind the best head is skipped. */
  maxLagBlocks: number;
  /**
   * Hedged reads: a read not answered within the node's usual time (its recent 95th percentile, times
   * 1.5, kept between these bounds, ms) is also sent to another usable node, and the first answer wins. Absent or
   * a max of 0: no hedging.
   */
  hedge?: { minMs: number; maxMs: number };
  /**
   * Healthy nodes that must have a block with the same hash for it to be the network's head
   * (agreed-head.ts `quorumHead`); 0: a majority of them; absent or 1: the highest believed head, as with one node.
   */
  quorum?: number;
  /** How long a read waits for room at upstreams that are at their own bounds, ms (absent: 250). */
  limitWaitMs?: number;
  /** Pieces of one split eth_getLogs asked at once (absent: 4). */
  logsPieces?: number;
  /** The most bytes a split eth_getLogs's pieces may hold together (rpc.maxAnswerBytes; absent: no bound). */
  maxAnswerBytes?: number;
  /** What answers are checked for before they are passed on (networks.<n>.verify; absent: off). */
  verify?: 'off' | 'cheap' | 'full';
}

/** Block hashes a member keeps to compare with the others' (agreed-head.ts `quorumHead`). */
const KEPT_HASHES = 64;

/** How many recent answer times a member keeps for its hedge delay. */
const TIMES = 64;

export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * One upstream of a network's pool and what the chain module knows of it: whether it answers (a circuit breaker
 * fed by every call and every health check), its chain id, its head, and a node's request to be left alone for a
 * while (429 with Retry-After). The pool picks among members with `usable`.
 */
export class UpstreamMember {
  /** Its latest block as last seen (health check or an answer it gave). */
  head: number | undefined;
  /**
   * The newest block its answers showed. A check may lower `head` (a node that lost blocks, or one read a moment
   * before it counts its newest block); this stays, so that a lookup another node answers `null` is asked of it.
   */
  shown: number | undefined;
  /**
   * A head held back as too far ahead (agreed-head.ts): the claim and how many rounds of checks the node kept to
   * it; and the highest block it served when asked for it after that (only then is a lone node's jump believed).
   */
  held: { head: number; rounds: number } | undefined;
  served: number | undefined;
  /**
   * Its latest block as the last check read it (networks of several nodes), and hashes of other blocks it was asked
   * for to compare it with the others (a few dozen, the newest kept); dropped when it changes branch.
   */
  block: { number: number; hash: string } | undefined;
  readonly hashes = new Map<number, string>();
  /** Its block at a height a quorum of nodes agrees on has another hash: it is on another branch, and takes no call. */
  forked = false;
  /** The chain id it reported; a member whose chain id is not the network's is `refused` until it serves it again. */
  chainId: number | undefined;
  refused = false;
  /**
   * Its chain id is not confirmed since it (re)appeared: at start, after its breaker opened (it was down), after its
   * connections all dropped (the node behind its URL may be another), after an answer showed a head far from its
   * own. It takes no call until a read of its chain id confirms it (chain.ts `confirm`); set only by the chain module.
   */
  unconfirmed = false;
  /** The read of its chain id under way, shared by the checks and the calls that wait for it. */
  confirming: Promise<void> | undefined;
  /** Its own bounds (rate, concurrency); undefined when it has none: no work per call then. */
  readonly room: UpstreamRoom | undefined;
  /** Methods it does not serve, configured or learnt; undefined while there are none. */
  private gaps: MethodGaps | undefined;
  /**
   * The widest eth_getLogs range it takes, in blocks: configured, or the narrowest its refusals named (or half a
   * range it refused without naming one: chain/logs-split.ts); undefined: no bound known.
   */
  logsRange: number | undefined;
  /** Its configured most logs in one answer: an answer of that many may be cut, and is asked again in halves. */
  readonly logsCutAt: number | undefined;
  /** The most logs it answers, configured or as its refusals named (for /readyz: ranges are split on refusal). */
  logsResults: number | undefined;
  /**
   * The oldest block whose state, and whose history (blocks, receipts, logs), it holds: configured, probed, or
   * learnt from its answers (holdings.ts). A kind absent is not known: taken as every block.
   */
  holding: Holdings = {};
  /** Answers it gave that failed verification, by check (chain/verify/), for /readyz. */
  verifyFailures: Record<string, number> | undefined;
  /** Calls sent to it (and units, with a price list), by purpose: read by /metrics. */
  readonly spend: UpstreamSpend;
  /** Reached at least once since the last failure (for the banner and /readyz). */
  reachable = false;
  lastError: string | undefined;
  private failures = 0;
  private openUntil = 0;
  private restUntil = 0;
  private trialOut = false;
  /** Its recent answer times (ms), a ring; and the hedge delay they give, worked out again every 16 answers. */
  private readonly times = new Float64Array(TIMES);
  private answered = 0;
  private hedgeMs: number | undefined;

  constructor(
    readonly upstream: Upstream,
    readonly config: MemberConfig,
    /** Position in the configuration: the first primary is the designated signer. */
    readonly index: number,
  ) {
    this.spend = new UpstreamSpend(config);
    this.room = UpstreamRoom.of(config.rate, config.concurrency, Date.now());
    if (config.lacks?.length) this.gaps = new MethodGaps(config.lacks);
    this.logsRange = config.getLogs?.maxBlockRange || undefined;
    this.logsCutAt = config.getLogs?.maxResults || undefined;
    this.logsResults = this.logsCutAt;
    if (config.archive) this.holding = { state: EVERY_BLOCK, history: EVERY_BLOCK };
    else if (config.stateWindow) this.holding = { state: lastBlocks(config.stateWindow) };
  }

  /** It holds block `n`'s `kind` at head `head` (not known: it is taken to). */
  holds(kind: Holds, n: number, head: number | undefined): boolean {
    const h = this.holding[kind];
    return h === undefined || n >= oldestHeld(h, head);
  }

  /** It may take one more call now (not at its own rate or concurrency). */
  hasRoom(now: number): boolean {
    return this.room === undefined || this.room.has(now);
  }

  /** It does not serve `method` (configured, or it said so lately). */
  lacks(method: string, now: number): boolean {
    return this.gaps !== undefined && this.gaps.lacks(method, now);
  }

  /** It answered that it does not serve `method`: not asked it again for a while, while another may have it. */
  learnGap(method: string, now: number): void {
    (this.gaps ??= new MethodGaps([])).learn(method, now);
  }

  /** What it lacks now, for /readyz; undefined when nothing. */
  gapList(now: number): string[] | undefined {
    const list = this.gaps?.list(now);
    return list && list.length > 0 ? list : undefined;
  }

  get label(): string {
    return this.upstream.label;
  }

  breaker(now = Date.now()): BreakerState {
    if (this.openUntil === 0) return 'closed';
    return now < this.openUntil ? 'open' : 'half-open';
  }

  /**
   * May take a call now: not refused, its chain id confirmed, not resting after a 429, breaker closed (or half-open with no trial out),
   * no more than `maxLag` blocks behind `lagFrom` (the chain module's: `best`, or less with a quorum), not
   * `suspect` (above `best`) and not `forked`. `atBlock`: the call names that block; a node behind the others that
   * has it answers it as well as they do, so its lag does not count.
   */
  usable(best: number | undefined, policy: HealthPolicy, now = Date.now(), lagFrom = best, atBlock?: number): boolean {
    if (this.refused || this.unconfirmed || now < this.restUntil) return false;
    const state = this.breaker(now);
    if (state === 'open' || (state === 'half-open' && this.trialOut)) return false;
    const behind = atBlock !== undefined && this.head !== undefined && this.head >= atBlock ? false : this.lagging(lagFrom, policy);
    return !this.forked && !behind && !this.suspect(best);
  }

  /**
   * Its latest block, read by a check. A block that does not follow what it said before (another hash at a height
   * it had, a parent that is not its block below, a lower head) means it changed branch: the hashes kept are dropped.
   */
  noteLatest(n: number, hash: string, parentHash: string | undefined): void {
    const had = this.hashes.get(n) ?? (this.block?.number === n ? this.block.hash : undefined);
    const below = this.hashes.get(n - 1) ?? (this.block?.number === n - 1 ? this.block.hash : undefined);
    if ((had !== undefined && had !== hash) || (below !== undefined && parentHash !== undefined && below !== parentHash) || (this.block !== undefined && n < this.block.number)) {
      this.hashes.clear();
      this.shown = undefined;
    }
    this.block = { number: n, hash };
    this.noteHash(n, hash);
  }

  /** The hash of its block `n` (its latest, or asked for). */
  noteHash(n: number, hash: string): void {
    this.hashes.set(n, hash);
    if (this.hashes.size > KEPT_HASHES) this.hashes.delete(Math.min(...this.hashes.keys()));
  }

  /**
   * Its head is above the agreed head `best`, which is the highest head believed: it claims a block nobody
   * confirms (a node claiming 10^12). It takes no calls, so that no caller is shown that block.
   */
  suspect(best: number | undefined): boolean {
    return best !== undefined && this.head !== undefined && this.head > best;
  }

  /** Asked to be left alone (a 429's Retry-After) until a moment still to come: not even checked meanwhile. */
  resting(now = Date.now()): boolean {
    return now < this.restUntil;
  }

  lagging(best: number | undefined, policy: HealthPolicy): boolean {
    return best !== undefined && this.head !== undefined && best - this.head > policy.maxLagBlocks;
  }

  lag(best: number | undefined): number | undefined {
    return best === undefined || this.head === undefined ? undefined : Math.max(0, best - this.head);
  }

  /** A call is about to go out; a half-open breaker lets only this one through until it ends. */
  starting(now = Date.now()): void {
    if (this.breaker(now) === 'half-open') this.trialOut = true;
  }

  /** The member answered (with a result or a JSON-RPC error: both mean it is up). Returns true when it came back. */
  succeeded(): boolean {
    const back = !this.reachable || this.openUntil !== 0;
    this.failures = 0;
    this.openUntil = 0;
    this.trialOut = false;
    this.reachable = true;
    this.lastError = undefined;
    return back;
  }

  /**
   * An outcome that says nothing of the node's health (it lacks a block another node has; the gateway refused the
   * answer's size): the breaker stays as it was, and a half-open trial is over, so the next call may try again.
   */
  settled(): void {
    this.trialOut = false;
  }

  /**
   * No answer (transport, time-out, 5xx, 429) or the node's "not now" (a capacity error). Returns true when this
   * opened the breaker.
   */
  failed(err: unknown, policy: HealthPolicy, now = Date.now(), restMs?: number): boolean {
    this.lastError = describe(err);
    if (restMs !== undefined) this.restUntil = now + restMs;
    this.trialOut = false;
    this.failures++;
    const wasOpen = this.openUntil !== 0;
    if (this.failures >= policy.breakerFailures || wasOpen) {
      this.openUntil = now + policy.breakerCooldownMs;
      this.reachable = false;
      return !wasOpen;
    }
    return false;
  }

  /** A read it answered took `ms`. */
  observe(ms: number): void {
    this.times[this.answered++ % TIMES] = ms;
    if (this.answered % 16 === 0) this.hedgeMs = undefined;
  }

  /**
   * How long a read waits for this member's answer before it is also sent to another: 1.5 times its 95th
   * percentile over its last 64 answers, within [minMs, maxMs]; maxMs until it has answered 16.
   */
  hedgeAfter(minMs: number, maxMs: number): number {
    if (this.answered < 16) return maxMs;
    if (this.hedgeMs === undefined) {
      const n = Math.min(this.answered, TIMES);
      const sorted = this.times.slice(0, n).sort();
      this.hedgeMs = 1.5 * sorted[Math.min(n - 1, Math.floor(n * 0.95))];
    }
    return Math.min(maxMs, Math.max(minMs, this.hedgeMs));
  }

  /** The member's time-out for a call (a trace's, or any other's), or the method's own. */
  timeoutFor(trace: boolean, fallbackMs: number): number {
    const own = trace ? this.config.debugTimeoutMs : this.config.timeoutMs;
    return own ?? fallbackMs;
  }
}

/** An error as one line for the banner, /readyz and logs: the gateway's message and, if any, what caused it. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  const why = cause?.code ?? cause?.message;
  return why ? `${err.message}: ${String(why)}` : err.message;
}
