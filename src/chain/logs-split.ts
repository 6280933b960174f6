import { CallAbort } from '../errors/on-abort.ts';
import { CallAborted } from '../errors/call-aborted.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import type { Outcome } from '../upstream/classify.ts';
import { logsRefusal, type LogsRefusal } from '../upstream/size-refusals.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import type { Route } from './route.ts';
import type { UpstreamMember } from './upstream-member.ts';

/** One piece asked of one member: its answer, what the answer says (upstream/classify.ts), who answered. */
export interface Piece {
  answer: UpstreamAnswer;
  outcome: Outcome;
  member: UpstreamMember;
}

/** What the split needs of the network's pool (upstream-pool.ts). */
export interface LogsPool {
  /** The call as one, by the pool's usual path. */
  send(spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route): Promise<UpstreamAnswer>;
  /** One piece: a read (sent once more to another member when retryable), not hedged (each is a provider's call). */
  piece(spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route): Promise<Piece>;
  /** The widest range the members that would take `route` accept; undefined: one of them takes any. */
  rangeFor(route: Route, method: string): number | undefined;
  /** Some member has a known range bound or a configured result bound: ranges are looked at before they go. */
  readonly logsBounded: boolean;
  /** The newest block callers were shown (the network's head): what `latest` means here. */
  head(): number | undefined;
  /** The number of the block a tag (`safe`, `finalized`) names, as a node says; undefined if it has none. */
  blockNumber(tag: string, timeoutMs: number, route: Route): Promise<number | undefined>;
}

interface LogFilter {
  fromBlock?: unknown;
  toBlock?: unknown;
  blockHash?: unknown;
}

const hex = (n: number) => `0x${n.toString(16)}`;
const HEX = /^0x[0-9a-fA-F]{1,16}$/;

/**
 * eth_getLogs over any range the caller's plan allows, in front of upstreams that take less (a provider's 2,000
 * blocks, 10,000 logs): the range is cut into pieces every upstream that may take them accepts (its known range,
 * upstreams[].getLogs or learnt from its refusals), asked at most `concurrency` at once within the call's deadline,
 * and the logs put together in block order, as one archive node answers. A piece refused for its size (its range,
 * or its results: upstream/size-refusals.ts), or answered with as many logs as an upstream's configured
 * `maxResults` (it may be cut), is asked again in halves, down to one block; one block still refused is the answer.
 * A filter by `blockHash`, or whose range is not known in numbers, goes as it is. Each piece past the first is
 * charged as the call it is (`route.charge`). With no bound known anywhere, the call goes as it is, and only a
 * refusal for size starts a split: nothing more per call.
 */
export class LogsSplit {
  constructor(
    private readonly pool: LogsPool,
    /** Pieces of one call asked at once (upstreams.logsPieces). */
    private readonly concurrency = 4,
    /** The most bytes the pieces of one call may hold together (rpc.maxAnswerBytes): as one node's answer. */
    private readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {}

  call(spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route): Promise<UpstreamAnswer> {
    const filter = params[0] as LogFilter | null | undefined;
    if (filter === null || typeof filter !== 'object' || filter.blockHash !== undefined) return this.pool.send(spec, params, timeoutMs, route);
    if (!this.pool.logsBounded) {
      return this.pool.send(spec, params, timeoutMs, route).then((a) => (logsRefusal(a.error) ? this.split(spec, params, timeoutMs, route, a) : a));
    }
    return this.split(spec, params, timeoutMs, route, undefined);
  }

  /** The call in pieces; `refused`: the whole range was asked as one, and refused for its size. */
  private async split(spec: MethodFacts, params: unknown[], timeoutMs: number, route: Route, refused: UpstreamAnswer | undefined): Promise<UpstreamAnswer> {
    const filter = params[0] as LogFilter;
    const range = await this.blocks(filter, timeoutMs, route);
    if (!range || range.to < range.from) return refused ?? this.pool.send(spec, params, timeoutMs, route);
    const job = new Job(this.pool, spec, params, timeoutMs, route, this.concurrency, this.maxBytes);
    try {
      return joined(await job.range(range.from, range.to, true, refused));
    } catch (err) {
      job.stop();
      if (err instanceof Refused) return err.answer;
      throw err;
    } finally {
      job.release();
    }
  }

  /**
   * The filter's range in block numbers: `latest`, `pending` and a missing bound are the network's head; `earliest`
   * is 0; `safe` and `finalized` are asked of a node. Undefined when it cannot be told (no head known yet).
   */
  private async blocks(filter: LogFilter, timeoutMs: number, route: Route): Promise<{ from: number; to: number } | undefined> {
    const at = async (tag: unknown): Promise<number | undefined> => {
      if (tag === undefined || tag === 'latest' || tag === 'pending') return this.pool.head();
      if (tag === 'earliest') return 0;
      if (typeof tag === 'string' && HEX.test(tag)) return Number.parseInt(tag.slice(2), 16);
      return tag === 'safe' || tag === 'finalized' ? this.pool.blockNumber(tag, timeoutMs, { signal: route.signal }) : undefined;
    };
    const [from, to] = await Promise.all([at(filter.fromBlock), at(filter.toBlock)]);
    return from === undefined || to === undefined ? undefined : { from, to };
  }
}

/** A piece's refusal that is the call's answer (one block over a node's bound, or any other error). */
class Refused extends Error {
  constructor(readonly answer: UpstreamAnswer) {
    super('refused');
  }
}

/** One split call: its pieces, the slots they share, the bytes they hold, and the signal that stops them all. */
class Job {
  private readonly abort = new CallAbort();
  private readonly off: (() => void) | undefined;
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private bytes = 0;
  private readonly filter: LogFilter;

  constructor(
    private readonly pool: LogsPool,
    private readonly spec: MethodFacts,
    private readonly params: unknown[],
    private readonly timeoutMs: number,
    private readonly route: Route,
    private readonly slots: number,
    private readonly maxBytes: number,
  ) {
    this.filter = params[0] as LogFilter;
    const parent = route.signal;
    if (parent?.aborted) this.abort.abort(parent.reason);
    else if (parent) this.off = parent.onAbort(() => this.abort.abort(parent.reason));
  }

  /** A piece failed for good: the others are let go (as a caller gone: no node is to blame). */
  stop(): void {
    this.abort.abort(new CallAborted('caller_gone'));
  }

  /** The call is over: the caller's deadline need not tell this job any more. */
  release(): void {
    this.off?.();
  }

  /**
   * The logs of blocks `from`..`to` as answers in block order. `last`: the range ends where the caller's does (it
   * keeps the caller's `toBlock`, a tag included: the node's own `latest` is the end). `refused`: it was asked as
   * one already and refused for its size.
   */
  async range(from: number, to: number, last: boolean, refused?: UpstreamAnswer): Promise<UpstreamAnswer[]> {
    const span = to - from + 1;
    if (refused === undefined) {
      const size = this.pool.rangeFor({ ...this.route, span }, this.spec.name);
      if (size !== undefined && span > size) {
        const parts: Array<[number, number]> = [];
        for (let f = from; f <= to; f += size) parts.push([f, Math.min(to, f + size - 1)]);
        await this.charge(parts.length - 1);
        return (await Promise.all(parts.map(([f, t], i) => this.range(f, t, last && i === parts.length - 1)))).flat();
      }
      const got = await this.ask(from, to, last);
      if (!overSize(got, span)) {
        if (got.answer.error !== undefined) throw new Refused(got.answer);
        this.count(got.answer);
        return [got.answer];
      }
      refused = got.answer;
    }
    if (span === 1) throw new Refused(refused);
    const mid = from + Math.floor(span / 2) - 1;
    await this.charge(2);
    const [a, b] = await Promise.all([this.range(from, mid, false), this.range(mid + 1, to, last)]);
    return [...a, ...b];
  }

  /** Blocks `from`..`to` of the caller's filter, asked of one member when a slot is free. */
  private async ask(from: number, to: number, last: boolean): Promise<Piece> {
    await this.slot();
    try {
      if (this.abort.aborted) throw this.abort.reason;
      const q: LogFilter = { ...this.filter, fromBlock: hex(from) };
      if (!last) q.toBlock = hex(to);
      const params = [q, ...this.params.slice(1)];
      // A piece needs its own blocks held (pruned history): its oldest is its own first block.
      const held = this.route.needs === undefined ? this.route : { ...this.route, oldest: from };
      return await this.pool.piece(this.spec, params, this.timeoutMs, { ...held, signal: this.abort, span: to - from + 1, minBlock: to });
    } finally {
      this.free();
    }
  }

  private slot(): Promise<void> | void {
    if (this.running < this.slots) {
      this.running++;
      return;
    }
    return new Promise((r) => this.waiting.push(r));
  }

  private free(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  private async charge(pieces: number): Promise<void> {
    if (this.abort.aborted) throw this.abort.reason;
    if (pieces > 0 && this.route.charge) await this.route.charge(pieces, this.spec.cost);
  }

  /** A piece's answer counted against the bytes one node's answer may hold. */
  private count(answer: UpstreamAnswer): void {
    this.bytes += answer.raw?.length ?? JSON.stringify(answer.result ?? null).length;
    if (this.bytes > this.maxBytes) throw new GatewayError('ANSWER_TOO_LARGE', { method: this.spec.name, limit: this.maxBytes });
  }
}

/**
 * A piece the node refused for its size, or answered with as many logs as its configured `maxResults` (a node that
 * cuts instead of refusing): to be asked again in halves, when it spans more than one block.
 */
function overSize(got: Piece, span: number): boolean {
  if (got.outcome.kind === 'too-wide') return true;
  const cut = got.member.logsCutAt;
  return cut !== undefined && span > 1 && Array.isArray(got.answer.result) && got.answer.result.length >= cut;
}

/** The pieces' logs as one answer, in order; its text joined from theirs when each has it (nothing parsed again). */
function joined(answers: UpstreamAnswer[]): UpstreamAnswer {
  if (answers.length === 1) return answers[0];
  const result: unknown[] = [];
  let raw: string[] | undefined = [];
  for (const a of answers) {
    const logs = a.result as unknown[];
    for (const l of logs) result.push(l);
    const text = a.raw?.trim();
    if (raw && text !== undefined && text.startsWith('[') && text.endsWith(']')) {
      const inner = text.slice(1, -1).trim();
      if (inner) raw.push(inner);
    } else raw = undefined;
  }
  return raw ? { result, raw: `[${raw.join(',')}]` } : { result };
}

/**
 * What a member's refusal for size teaches of its range: the bound its words name, or, for a range refusal that
 * names none, half the range it refused; the narrowest so far stands. A refusal of its results teaches no range
 * (it depends on the logs, not the blocks), unless its words name a range it always takes (Alchemy's); the result
 * count its words name is kept for /readyz.
 */
export function learnRange(m: UpstreamMember, refusal: LogsRefusal | undefined, params: unknown[]): void {
  let blocks = refusal?.blocks;
  if (blocks === undefined && refusal?.of === 'range') {
    const f = params[0] as LogFilter | undefined;
    const from = typeof f?.fromBlock === 'string' && HEX.test(f.fromBlock) ? Number.parseInt(f.fromBlock.slice(2), 16) : undefined;
    const to = typeof f?.toBlock === 'string' && HEX.test(f.toBlock) ? Number.parseInt(f.toBlock.slice(2), 16) : undefined;
    if (from !== undefined && to !== undefined && to >= from) blocks = Math.max(1, Math.floor((to - from + 1) / 2));
  }
  if (blocks !== undefined && (m.logsRange === undefined || blocks < m.logsRange)) m.logsRange = blocks;
  const results = refusal?.results;
  if (results !== undefined && (m.logsResults === undefined || results < m.logsResults)) m.logsResults = results;
}
