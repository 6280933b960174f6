import { Buffer } from 'node:buffer'; // the global one is a getter on globalThis, called at each use
import type { CallAborted } from '../errors/call-aborted.ts';
import { cacheHeader, hitFor } from '../cache/response-cache.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import { asGatewayError, type Arrival } from './admit.ts';
import type { Call, Charger } from './call.ts';
import type { CallDeadline, RequestDeadline } from './deadline.ts';
import type { EndpointDeps } from './endpoint-deps.ts';
import { failed, type Framed, type Limited } from './frame-and-limit.ts';
import type { FramedItem } from './framing.ts';
import { buildPipeline, type NetworkPipeline } from './pipeline.ts';
import { recorder } from './record.ts';
import { responseBytes, responseJson } from './respond.ts';
import { SMALL_BYTES, type RequestBytes } from './response-budget.ts';
import type { Answer } from './respond.ts';
import type { ResolvedKey } from '../auth/key-resolver.ts';

/** A request's answers, ready to be sent: serialised pieces held against the response budget. */
export interface Ran {
  answers: Answer[];
  pieces: Array<string | Buffer | undefined>;
  held: RequestBytes;
  /** A single request's `X-Cache` (cache-policy: HIT only of the caller's own account's entries). */
  cache?: 'HIT' | 'MISS';
}

/** At most what `{"jsonrpc":"2.0","id":…,"result":…}` adds to a result: an id is at most a few dozen characters. */
const ENVELOPE_BYTES = 128;

/**
 * Stage run: the request's prepared items through their network's pipeline (built once per network at start-up),
 * concurrently but bounded (rpc.batchConcurrency), answers in request order, under deadlines: an item is answered
 * -32015 at its budget's end whatever the stages below do (stage `deadline`, docs/pipeline.md), and none starts once
 * the request's own signal has aborted. Each answer is serialised as it arrives and counted against the response
 * budget. Refunds what the stages say did no node work; records every item.
 */
export function runner(deps: EndpointDeps) {
  const { config, limits, metrics, responses } = deps;
  const invalidCost = config.limits.invalidCost;
  const record = recorder(deps);
  const pipelines = new Map(deps.networks.list.map((n) => [n, buildPipeline(n)]));

  // A split eth_getLogs's further pieces are charged as the limit stage charges calls (chain/logs-split.ts).
  const charger: Charger | undefined = limits && { charge: (key, units) => limits.admit(key, units) };
  const shared: RunShared = { limits, metrics, invalidCost, record, responses, fit, charger, concurrency: config.rpc.batchConcurrency, used: (key) => deps.keys.used(key) };
  /** The request's answers: at once when every item was answered at once (a cache hit), else a promise of them. */
  return (f: Framed, l: Limited, deadline: RequestDeadline, t0: number, log: Arrival['log']): Ran | Promise<Ran> => {
    // One object per request with its steps as methods, not closures made per request.
    const r = new RequestRun(f, l, deadline, t0, log, pipelines.get(l.ctx.network)!, shared);
    r.launch();
    return r.over() ? r.finish() : new Promise<Ran>((resolve, reject) => r.whenOver(resolve, reject));
  };

  /**
   * An item's answer serialised, if it fits the request's response budget; else its answer becomes -32005
   * answer_too_large (this request's share is spent) or answers_busy (all requests' is), and the parsed
   * answer is let go at once.
   */
  function fit(held: RequestBytes, item: FramedItem, answer: UpstreamAnswer, method: string, answers: Array<Answer | undefined>, i: number): string | Buffer | undefined {
    // A node's big result is weighed before an answer is built of it: most will not fit once the budget is spent.
    const raw = answer.raw;
    const json = raw !== undefined && raw.length > SMALL_BYTES ? undefined : responseJson(item.id, answer);
    const rawBytes = json === undefined ? Buffer.byteLength(raw!) : 0;
    const bytes = json === undefined ? rawBytes + ENVELOPE_BYTES : json.length > 4096 ? Buffer.byteLength(json) : json.length;
    const fits = held.fit(bytes);
    if (fits === 'ok') return json === undefined ? responseBytes(item.id, answer as UpstreamAnswer & { raw: string }, rawBytes) : json.length > SMALL_BYTES ? Buffer.from(json) : json;
    const e = fits === 'too_large' ? new GatewayError('RESPONSE_TOO_LARGE', { limit: responses.perRequest, method })
      : fits === 'held' ? new GatewayError('RESPONSES_HELD', { limit: responses.perHolder, holder: 'key, account or address' })
        : new GatewayError('RESPONSES_BUSY', { limit: responses.totalBytes });
    answers[i] = failed(e);
    return undefined;
  }
}

/** What every request's run shares (made once per endpoint). */
interface RunShared {
  limits: EndpointDeps['limits'];
  metrics: EndpointDeps['metrics'];
  responses: EndpointDeps['responses'];
  invalidCost: number;
  /** Items of one request in flight at once (rpc.batchConcurrency). */
  concurrency: number;
  record: ReturnType<typeof recorder>;
  fit: (held: RequestBytes, item: FramedItem, answer: UpstreamAnswer, method: string, answers: Array<Answer | undefined>, i: number) => string | Buffer | undefined;
  /** The key's last use moves (on success only). */
  used: (key: ResolvedKey) => void;
  charger: Charger | undefined;
}

/**
 * One request's items through its network's pipeline, under their deadlines; then its refunds and its records.
 * Items are started by `launch` (at most `concurrency` in flight) and counted until each is settled: by its answer,
 * or by its deadline ending first. The deadline is kept here, for all the request's items at once, not by a promise
 * per call: the items of a batch that start together with the same budget share one deadline (RequestDeadline.join)
 * and one listener on it, which answers those still waiting when it aborts (a promise and four closures per
 * call were a tenth of a batch's CPU).
 */
class RequestRun {
  private readonly calls: Array<Call | undefined>;
  private readonly held: RequestBytes;
  /** Set when the caller's share of the response budget is spent: its items are refused before a node is asked. */
  private readonly refused: GatewayError | undefined = undefined;
  private readonly pieces: Array<string | Buffer | undefined>;
  /** The next item to start, and how many started are not yet settled. */
  private next = 0;
  private running = 0;
  /** While the first items start together: the deadlines they made, one per budget, which later ones of them join. */
  private together: CallDeadline[] | undefined = [];
  private resolve: ((ran: Ran) => void) | undefined;
  private reject: ((err: unknown) => void) | undefined;

  constructor(
    private readonly f: Framed,
    private readonly l: Limited,
    private readonly deadline: RequestDeadline,
    private readonly t0: number,
    private readonly log: Arrival['log'],
    private readonly pipeline: NetworkPipeline,
    private readonly s: RunShared,
  ) {
    this.calls = new Array<Call | undefined>(f.items.length);
    this.held = s.responses.forRequest(l.ctx);
    if (s.responses.spent(this.held)) this.refused = new GatewayError('RESPONSES_HELD', { limit: s.responses.perHolder, holder: 'key, account or address' });
    this.pieces = new Array<string | Buffer | undefined>(f.items.length);
  }

  /** Starts items while fewer than `concurrency` are in flight, none once the request's signal has aborted. */
  launch(): void {
    const n = this.f.items.length;
    while (this.running < this.s.concurrency && this.next < n && !this.deadline.signal.aborted) {
      if (this.start(this.next++)) this.running++;
    }
    this.together = undefined;
  }

  /** Nothing in flight and nothing more to start: the request can be answered. */
  over(): boolean {
    return this.running === 0;
  }

  /** Once over, the answers go to `resolve` (or what went wrong making them, to `reject`). */
  whenOver(resolve: (ran: Ran) => void, reject: (err: unknown) => void): void {
    this.resolve = resolve;
    this.reject = reject;
  }

  /** Item i through the pipeline; false when it is already settled: refused before the limit, or answered at once. */
  private start(i: number): boolean {
    const p = this.l.prepared[i];
    if (!p) return false;
    if (this.refused) {
      this.l.answers[i] = failed(this.refused);
      return false;
    }
    // The method's name from its table entry, not the request's own copy of it: a string made once, whose hash
    // V8 keeps, for every lookup by name that follows (pipelines, cache policies, usage); the request's copy, new
    // each time, was hashed and interned again at each of them.
    const method = p.entry.name;
    const looked = this.pipeline.atOnce(method, p.call.params);
    const hit = looked?.hit;
    const signal = hit ? this.deadline.signal : this.deadlineFor(p.entry.timeoutMs);
    const ctx = this.l.ctx;
    // Written out, not spread from ctx: one shape for every Call, and no copying helper per call on the hot path.
    const call: Call = {
      network: ctx.network, key: ctx.key, requestId: ctx.requestId, session: ctx.session,
      method, params: p.call.params, spec: p.entry, cost: p.entry.cost, charger: this.s.charger, signal,
      looked, cache: hit ? hitFor(hit, ctx.key.accountId) : undefined, refusedByRules: undefined, seenBlock: undefined, node: undefined,
    };
    this.calls[i] = call;
    if (hit) {
      this.answered(i, hit);
      return false;
    }
    if (signal.aborted) {
      this.l.answers[i] = failed(signal.reason as CallAborted);
      return false;
    }
    let answered: Promise<UpstreamAnswer>;
    try {
      answered = this.pipeline.run(call);
    } catch (err) {
      answered = Promise.reject(err);
    }
    answered.then((answer) => {
      if (this.l.answers[i]) return; // its deadline ended first
      this.deadline.done(signal);
      this.answered(i, answer);
      this.settled();
    }, (err) => {
      if (this.l.answers[i]) return;
      this.deadline.done(signal);
      this.l.answers[i] = failed(asGatewayError(err, this.log));
      this.settled();
    });
    return true;
  }

  /**
   * The deadline of a call with a budget of `budgetMs`: shared with the items that start together with it with the
   * same budget; a new one is listened to, so that its end answers every item of it still waiting.
   */
  private deadlineFor(budgetMs: number): CallDeadline {
    const together = this.together;
    if (together) for (const d of together) if (d.budgetMs === budgetMs) return this.deadline.join(d);
    const d = this.f.items.length === 1 ? this.deadline.only(budgetMs) : this.deadline.forCall(budgetMs);
    if (d.aborted) return d;
    d.onAbort(() => this.expired(d));
    together?.push(d);
    return d;
  }

  /** Deadline `d` ended (its budget, the request's, or its caller gone): its items still waiting get its error now. */
  private expired(d: CallDeadline): void {
    const answers = this.l.answers;
    let ended = 0;
    for (let i = 0; i < this.next; i++) {
      if (this.calls[i]?.signal !== d || answers[i]) continue;
      answers[i] = failed(d.reason as CallAborted);
      this.deadline.done(d);
      ended++;
    }
    if (ended) this.settled(ended);
  }

  /** An item in flight is settled (`count` of them): start the next, and answer the request once none is left. */
  private settled(count = 1): void {
    this.running -= count;
    this.launch();
    if (this.running !== 0 || !this.resolve) return;
    const resolve = this.resolve;
    this.resolve = undefined;
    try {
      resolve(this.finish());
    } catch (err) {
      this.reject!(err);
    }
  }
  /** Item i's answer, serialised now if it fits the response budget. */
  private answered(i: number, answer: UpstreamAnswer): void {
    const answers = this.l.answers;
    answers[i] = { answer, status: 200 };
    const item = this.f.items[i];
    try {
      if (!item.notification) this.pieces[i] = this.s.fit(this.held, item, answer, this.calls[i]!.method, answers, i);
    } catch (err) {
      answers[i] = failed(asGatewayError(err, this.log));
    }
  }

  /** What did no node work costs what an invalid item costs: refused by the gateway's rules, or never started. */
  units(i: number): number {
    const c = this.calls[i];
    return c && !c.refusedByRules ? c.cost : this.s.invalidCost;
  }

  /** The request is over: items never started get the deadline's error; refunds; records; the answers. */
  finish(): Ran {
    const { items } = this.f;
    const { ctx, prepared, answers } = this.l;
    this.deadline.end();
    // Items not started once the request's time was up (or its caller gone) did no node work.
    for (let i = 0; i < items.length; i++) if (prepared[i] && !answers[i]) answers[i] = failed(this.deadline.signal.reason as CallAborted);
    let refund = 0;
    for (let i = 0; i < items.length; i++) if (prepared[i]) refund += Math.max(0, prepared[i]!.entry.cost - this.units(i));
    if (refund > 0) this.s.limits?.refund(ctx.key, refund);
    // docs/decisions.md §9: a single request says whether its answer came from the cache.
    const cache = this.f.batch ? undefined : this.calls[0]?.cache;
    if (cache) this.s.metrics?.cacheLookup(ctx.network.name, cache === 'MISS' ? 'MISS' : 'HIT');
    this.s.record(this.t0, ctx.network, ctx.key, items, answers, (i) => this.units(i), { requestId: ctx.requestId, bodyBytes: this.f.bytes, calls: this.calls, pieces: this.pieces });
    // "Last used" is the last success: a request with at least one item answered with a result.
    for (let i = 0; i < items.length; i++) if (answers[i] && !answers[i]!.answer.error) { this.s.used(ctx.key); break; }
    return { answers: answers as Answer[], pieces: this.pieces, held: this.held, cache: cache && cacheHeader(cache) };
  }
}
