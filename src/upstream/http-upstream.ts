import { Buffer } from 'node:buffer'; // the global one is a getter on globalThis, called at each use
import { StringDecoder } from 'node:string_decoder';
import { Pool, type Dispatcher } from 'undici';
import type { Logger } from 'pino';
import { GatewayError, type RpcErrorObject } from '../errors/gateway-error.ts';
import { redactUrl } from '../errors/redact.ts';
import { AnswerBudget, UNBOUNDED_ANSWERS } from '../limits/answer-budget.ts';
import { MAX_ANSWER_DEPTH, nestedDeeperThan } from './answer-depth.ts';
import { hexAnswer } from './hex-answer.ts';
import { transportError } from './classify.ts';
import { batchRefusal } from './size-refusals.ts';
import type { CallSignal } from '../errors/on-abort.ts';
import { abortedWithAll } from './aborted-with-all.ts';
import { NodeHttpError, retryAfterMs, type CallOptions, type Upstream, type UpstreamAnswer } from './upstream.ts';
import { garbledOverLane, LaneDropped, WsLane } from './ws-lane.ts';
import { tracing, type AttemptTrace } from '../tracing/tracing.ts';

const HEADERS = { 'content-type': 'application/json' };
/** Calls per upstream batch unless configured (upstreams[].maxBatch): well under geth's 1,000 and what hosted nodes allow (100). */
const MAX_UPSTREAM_BATCH = 100;
/** How long light reads go alone to a node that refused a batch as a whole, before sharing is tried again. */
const BATCHES_REFUSED_REST_MS = 60_000;

interface Pending {
  method: string;
  params: unknown[];
  timeoutMs: number;
  /** Aborted when the call's budget ends or its caller is gone: its node request is aborted. */
  signal: CallSignal | undefined;
  /** A light read (CallOptions.light): alone in its tick, it may share a node request with other callers'. */
  light: boolean;
  /** Runs code (CallOptions.socket): over the node's WebSocket when it has one, never shared with other callers'. */
  socket: boolean;
  /** A trace (CallOptions.trace): shares a node request only with traces. */
  trace: boolean;
  /** Its attempt's W3C `traceparent` when its request is traced: it goes alone, by HTTP, with that header. */
  traceparent?: string;
  resolve: (a: UpstreamAnswer) => void;
  reject: (e: unknown) => void;
}

/**
 * Method names as JSON, made once each: every call's name is one of the method table's (or a check's own), a few
 * hundred at most; a name never seen is quoted afresh once the table is full.
 */
const QUOTED = new Map<string, string>();
const quoted = (method: string): string => {
  let q = QUOTED.get(method);
  if (q === undefined) {
    q = JSON.stringify(method);
    if (QUOTED.size < 1024) QUOTED.set(method, q);
  }
  return q;
};

const requestJson = (id: number, method: string, params: unknown[]) =>
  `{"jsonrpc":"2.0","id":${id},"method":${quoted(method)},"params":${JSON.stringify(params)}}`;

function parseAnswer(text: string): any {
  let msg: any;
  try {
    msg = JSON.parse(text);
  } catch (err) {
    throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: 'the node answered with something that is not JSON' }, { cause: err });
  }
  // Only answers that hold arrays/objects at all are scanned (a QUANTITY or a hash is not).
  if (typeof msg?.result === 'object' && msg.result !== null && nestedDeeperThan(text, MAX_ANSWER_DEPTH + 1)) throw tooDeep();
  return msg;
}

/** A bad answer: nested deeper than any Ethereum answer, it would overflow a client's stack. */
const tooDeep = () => new GatewayError('UPSTREAM_UNAVAILABLE', { detail: `the node answered with a result nested deeper than ${MAX_ANSWER_DEPTH}` });

/**
 * An item a node did not run because of the batch it came in: geth answers the items past its 25 MB answer limit
 * with -32003 "response too large", though each alone may fit. (-32003 alone is not enough: anvil uses it for a
 * refused transaction.)
 */
const batchRefused = (m: any) => m.error?.code === -32003 && /response too large/i.test(String(m.error.message));

/** One JSON-RPC answer object: its error passes through, its result is the answer; anything else is 503. */
function toAnswer(msg: any): UpstreamAnswer {
  if (msg && typeof msg === 'object' && !Array.isArray(msg)) {
    if (msg.error && typeof msg.error === 'object') return { error: msg.error };
    if ('result' in msg) return { result: msg.result };
  }
  throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: 'the node answered with something that is not JSON-RPC' });
}

/**
 * A JSON-RPC node over HTTP, through an undici keep-alive pool. No answer at all is 503 (-32002), too slow is
 * 504 (-32015) (upstream/classify.ts `transportError`); any JSON-RPC answer passes through, and the pool
 * classifies it (retry elsewhere, breaker).
 */
export class HttpUpstream implements Upstream {
  readonly label: string;
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Readonly<Record<string, string>>;
  /** The headers given (a provider's key, a URL's credentials), for the node's WebSocket handshake too. */
  private readonly own: Readonly<Record<string, string>> | undefined;
  /** The node's WebSocket for light reads, when it has one (upstream/ws-lane.ts); HTTP for everything else. */
  lane: WsLane | undefined;
  private nextId = 1;
  /** Told when the node closed the last open connection (Upstream.onDropped). */
  onDropped: (() => void) | undefined;
  /** Connections open to the node now. */
  private connections = 0;
  /** `close` was called: its own closing is no drop. */
  private closing = false;
  /**
   * Most calls in one batch to the node (upstreams[].maxBatch); lowered when the node refuses a batch for its size
   * (upstream/size-refusals.ts), to the size its words name or to half.
   */
  maxBatch = MAX_UPSTREAM_BATCH;

  /**
   * `answers`: the largest answer body read for one call (rpc.maxAnswerBytes) and the budget all answers share
   * (rpc.maxAnswerBytesInFlight); an answer past either is cut off as it streams, so that no node (nor callers
   * asking a node for 400 MB traces) can make the gateway hold it. `wsUrl`: the node's WebSocket address, when it
   * has one: its light reads go that way while the socket is open (upstream/ws-lane.ts); `log` hears when it stays down.
   * `headers`: sent with every request besides the content type (a provider's key; a worker's secret for its
   * primary's chain server). A URL's `user:password@` goes as Basic `Authorization` (unless `headers` has one): undici
   * sends only the origin, and the credentials are in no label, log or error (`redactUrl`).
   */
  constructor(readonly url: string, private readonly answers: AnswerBudget = UNBOUNDED_ANSWERS, connections = 64, wsUrl?: string, log?: Logger, headers?: Readonly<Record<string, string>>) {
    const u = new URL(url);
    const basic = basicAuthorization(u);
    this.own = headers === undefined && basic === undefined ? undefined
      : { ...(basic && !hasHeader(headers, 'authorization') ? { authorization: basic } : {}), ...headers };
    this.headers = this.own === undefined ? HEADERS : { ...HEADERS, ...this.own };
    this.label = redactUrl(url);
    this.path = u.pathname + u.search;
    this.pool = new Pool(u.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
    // The last open connection closed by the other side: the node behind the address may have been replaced. Not
    // undici's own closes (its idle close before the node's advertised keep-alive ends, a call aborted, a call past
    // its time-out): those say nothing of the node behind the address, and every answer in flight would wait for its
    // chain id to be read again, unbounded under load. One of several connections closed is a keep-alive ending.
    this.pool.on('connect', () => { this.connections++; });
    this.pool.on('disconnect', (_origin, _targets, err) => {
      this.connections = Math.max(0, this.connections - 1);
      if (this.closing || this.connections > 0 || OWN_CLOSES.has((err as { code?: unknown } | undefined)?.code)) return;
      this.onDropped?.();
    });
    if (wsUrl !== undefined) this.openSocket(wsUrl, log);
  }

  /** Light reads go over the node's WebSocket at `wsUrl` from now on, while it is open (upstream/ws-lane.ts). */
  openSocket(wsUrl: string, log?: Logger): void {
    this.lane ??= new WsLane(wsUrl, this.answers, log, this.own);
  }

  /** The node's own pushes of new heads, over its WebSocket when it has one (Upstream.followHeads). */
  followHeads(listener: (header: unknown) => void): (() => void) | undefined {
    return this.lane?.follow('newHeads', listener);
  }

  /** For `/readyz`: whether the node's WebSocket is open; undefined when it has none. */
  socketState(): 'open' | 'down' | undefined {
    return this.lane === undefined ? undefined : this.lane.isOpen ? 'open' : 'down';
  }

  /**
   * Sends one call. Calls made in the same tick (the items of a client's batch, an adapter's calls) go to the
   * node as one JSON-RPC batch: one HTTP round trip instead of N, as the node would get from the client itself.
   * A light read (`opts.light`) alone in its tick (a single request's call) waits a little longer, to the end of the
   * event loop's turn (setImmediate), and goes together with every other caller's such reads of that turn: under
   * load, the single requests read off many connections in one turn cost the node one HTTP request, not one each
   * (about twice the rate of distinct uncached reads in front of anvil). Alone in its turn, it goes alone.
   * With no node request in flight (a client alone: concurrency 1) it goes at once, with nothing to share: sent from
   * the end of the turn, it waited a whole turn more, since undici writes a request on a reused connection only after
   * the next poll for its bytes (its idle-socket check), an extra poll and wake-up per call.
   */
  call(method: string, params: unknown[], timeoutMs: number, opts?: CallOptions): Promise<UpstreamAnswer> {
    const signal = opts?.signal;
    const light = opts?.light === true;
    const socket = opts?.socket === true;
    const trace = opts?.trace === true;
    if (signal?.trace !== undefined) return this.tracedCall(tracing.attempt(signal.trace, this.label, method), { method, params, timeoutMs, signal, light, socket, trace });
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      // Nothing listens here per call: the request's run answers the caller as soon as the signal aborts (rpc/run.ts),
      // and the node request is aborted when no call of it still waits (sendOne, sendBatch), which settles this
      // promise too. A listener per call here cost a share of a batch's time (docs/performance.md).
      this.enqueue({ method, params, timeoutMs, signal, light, socket, trace, resolve, reject });
    });
  }

  /** Queues a call for the end of this tick, where the calls made in it go together (`flush`). */
  private enqueue(p: Pending): void {
    if (!this.queue) {
      this.queue = [];
      queueMicrotask(this.flush);
    }
    this.queue.push(p);
  }

  /**
   * A call of a traced request, its span ended with what the node did. With tracing.sendTraceparent: alone, by HTTP,
   * with its attempt's `traceparent` (a shared node request or a socket frame has no headers of its own); else as
   * any call (each traced call alone by HTTP costs 1 % sampling some 12 % of the CPU per request, docs/production.md).
   */
  private tracedCall(t: AttemptTrace, p: Omit<Pending, 'resolve' | 'reject'>): Promise<UpstreamAnswer> {
    return new Promise<UpstreamAnswer>((resolve, reject) => {
      if (p.signal?.aborted) return reject(p.signal.reason);
      if (tracing.sendsTraceparent) return void this.sendOne({ ...p, traceparent: t.traceparent, resolve, reject });
      this.enqueue({ ...p, resolve, reject });
    }).then((a) => {
      t.end(a.error === undefined ? 'answer' : `error ${a.error.code}`);
      return a;
    }, (err: unknown) => {
      t.end('failed', err);
      throw err;
    });
  }

  private queue: Pending[] | undefined;
  private lightQueue: Pending[] | undefined;
  /** Node requests sent and not yet answered (or failed); only a hint: were it ever left high, reads would share as before. */
  private inFlight = 0;
  /**
   * Until when light reads are not shared between callers (Date.now() ms; 0: they are): the node refused a batch
   * as a whole (batches off, or a proxy that does not take them), and each of its calls had to be sent again alone.
   * Sharing is tried again after BATCHES_REFUSED_REST_MS, so a node whose batches come back is batched again.
   */
  private soloUntil = 0;

  private sharesAgain(): boolean {
    if (Date.now() < this.soloUntil) return false;
    this.soloUntil = 0;
    return true;
  }

  /**
   * Sends what this tick queued: alone when alone (a light read: with other callers' at the turn's end), else
   * batches of calls alike (see below).
   */
  private readonly flush = (): void => {
    const queue = this.queue!;
    this.queue = undefined;
    if (queue.length === 1) {
      const p = queue[0];
      if (!p.light || (this.inFlight === 0 && !this.lightQueue) || (this.soloUntil !== 0 && !this.sharesAgain())) return void this.sendOne(p);
      if (!this.lightQueue) {
        this.lightQueue = [];
        setImmediate(this.flushLight);
      }
      return void this.lightQueue.push(p);
    }
    // A trace must not hold a read's answer back, so traces (`opts.trace`) share a batch only with their like. Reads of
    // different budgets (rpc.timeoutMs, rpc.heavyTimeoutMs) share one: each such call's own deadline ends it at its
    // budget (the request's run, rpc/run.ts), and the node request lives until the longest of them. A call with no
    // deadline of its own (the chain module's checks) has only the node request's time-out: it shares a batch only
    // with calls of the same time-out.
    this.sendGroups(queue, (p) => (p.signal === undefined ? p.timeoutMs : p.trace ? 'debug' : 'read'));
  };

  /**
   * Sends the light reads of this turn of the event loop that came alone in their ticks, from any number of
   * callers. They share a node request only with reads of the same time-out: a call with no deadline of its own
   * (the chain module's checks) then never waits longer than its own time-out allows.
   */
  private readonly flushLight = (): void => {
    const queue = this.lightQueue!;
    this.lightQueue = undefined;
    if (queue.length === 1) return void this.sendOne(queue[0]);
    this.sendGroups(queue, (p) => p.timeoutMs);
  };

  /** `queue` in groups of the same key, each sent as batches of at most MAX_UPSTREAM_BATCH (a call alone: alone). */
  private sendGroups(queue: Pending[], keyOf: (p: Pending) => string | number): void {
    const groups = new Map<string | number, Pending[]>();
    for (const p of queue) {
      const key = keyOf(p);
      const group = groups.get(key);
      if (group) group.push(p);
      else groups.set(key, [p]);
    }
    for (const group of groups.values()) {
      this.sendChunks(group);
    }
  }

  /** `calls` as batches of at most `maxBatch` (a call alone: alone). */
  private sendChunks(calls: Pending[]): void {
    const max = this.maxBatch;
    for (let i = 0; i < calls.length; i += max) {
      const chunk = calls.length <= max ? calls : calls.slice(i, i + max);
      if (chunk.length === 1) void this.sendOne(chunk[0]);
      else void this.sendBatch(chunk);
    }
  }

  private takeId(): number {
    const id = this.nextId++;
    if (this.nextId > 0x7fffffff) this.nextId = 1;
    return id;
  }

  /**
   * The answer's text; its bytes stay taken from the budget until the caller gives them back. Light reads and calls
   * that run code (`ids` given; `runsCode`: the latter among them) go over the node's WebSocket when it is open, else
   * by HTTP.
   */
  private post(body: string, timeoutMs: number, signal: CallSignal | undefined, ids?: number[], runsCode = false, traceparent?: string): Promise<Answered> {
    this.inFlight++;
    // A lone surrogate in the params (JSON.stringify writes it as `\udXXX`) makes the node fail to read the whole
    // message, and it answers with `id: null`: over the socket no call could be matched to that, and the caller would
    // wait to its time-out (the fuzzer found it). By HTTP the answer is the request's. (A string with a backslash and
    // `ud` in it also goes by HTTP: rare, and only slower.) The lane copes with any id-null answer (ws-lane.ts
    // `unnamed`), but by sending every call then waiting again by HTTP after a grace: kept off the socket, a caller
    // who can write a lone surrogate at will cannot make other callers' calls run twice.
    if (ids !== undefined && this.lane !== undefined && !body.includes('\\ud')) {
      const sent = this.lane.send(body, ids, timeoutMs, signal, this.landed, runsCode);
      if (sent !== undefined) return sent;
    }
    const headers = traceparent === undefined ? this.headers : { ...this.headers, traceparent };
    return postText(this.pool, { path: this.path, method: 'POST', headers, body, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }, this.answers, signal, this.landed);
  }

  private readonly landed = (): void => {
    this.inFlight--;
  };

  private refusal(err: unknown, method: string): GatewayError {
    if (err instanceof AnswerTooLarge) return new GatewayError('ANSWER_TOO_LARGE', { method, limit: this.answers.maxAnswerBytes });
    if (err instanceof AnswersBusy) return new GatewayError('ANSWERS_BUSY', { limit: this.answers.totalBytes });
    return transportError(err);
  }

  /**
   * `byHttp`: not over the node's WebSocket (an answer it garbled, or a call it lost as it closed, asked again: reads
   * only go over it, so asking again is safe, and the caller gets an answer, not a 503, from a node that still
   * answers HTTP).
   */
  private async sendOne(p: Pending, byHttp = false): Promise<void> {
    if (p.signal?.aborted) return p.reject(p.signal.reason);
    const id = this.takeId();
    const lane = (p.light || p.socket) && !byHttp && this.lane !== undefined && p.traceparent === undefined;
    let got: Answered;
    try {
      got = await this.post(requestJson(id, p.method, p.params), p.timeoutMs, p.signal, lane ? [id] : undefined, p.socket, p.traceparent);
    } catch (err) {
      if (err instanceof LaneDropped && !p.signal?.aborted) return void this.sendOne(p, true);
      return p.reject(p.signal?.aborted ? p.signal.reason : this.refusal(err, p.method));
    }
    try {
      const hex = hexAnswer(got.text, id);
      if (hex) return p.resolve(hex);
      const msg = parseAnswer(got.text);
      if (lane && garbledOverLane(msg)) return void this.sendOne(p, true);
      // An answer to another call (a node or proxy that mixed up its connections) is a bad answer, not this one's.
      if (msg?.id !== id) throw new GatewayError('UPSTREAM_UNAVAILABLE', { detail: 'the node answered with the id of another call' });
      const answer = toAnswer(msg);
      if (answer.error === undefined) answer.raw = resultText(got.text, id, msg);
      p.resolve(answer);
    } catch (err) {
      p.reject(err);
    } finally {
      this.answers.give(got.bytes);
    }
  }

  /**
   * One HTTP request for several calls. Answers are matched by id. A node that refuses the batch as a whole (one
   * error object, or not JSON: batches off, or over its size limit), leaves a call out, or refuses a call for the batch's
   * answer size gets those calls again one by one, so a client never sees a failure it would not have had
   * calling them singly.
   */
  private async sendBatch(batch: Pending[]): Promise<void> {
    // Over the node's WebSocket when it has one and every call may go there (upstream/ws-lane.ts): light reads, and
    // a client's batch of reads that run code too (its own batch: nothing of another caller's waits with it).
    const lane = this.lane !== undefined && batch.every((p) => p.light || p.socket);
    const ids = new Array<number>(batch.length);
    const parts = new Array<string>(batch.length);
    for (let i = 0; i < batch.length; i++) parts[i] = requestJson((ids[i] = this.takeId()), batch[i].method, batch[i].params);
    let got: Answered;
    try {
      let timeoutMs = 0;
      for (const p of batch) if (p.timeoutMs > timeoutMs) timeoutMs = p.timeoutMs;
      got = await this.post(`[${parts.join(',')}]`, timeoutMs, abortedWithAll(batch.map((p) => p.signal)), lane ? ids : undefined, lane && batch.some((p) => p.socket));
    } catch (err) {
      // Their answers together are over the limit (of one answer, or of the budget): each alone may fit. Lost with
      // the node's WebSocket: each asked again by HTTP (sendOne).
      if (err instanceof AnswerTooLarge || err instanceof AnswersBusy || err instanceof LaneDropped) {
        for (const p of batch) void this.sendOne(p, err instanceof LaneDropped);
        return;
      }
      // No answer at all (down, or too slow): sending the calls again singly would only hammer it.
      const e = transportError(err);
      for (const p of batch) p.reject(e);
      return;
    }
    let msgs: unknown;
    try {
      msgs = JSON.parse(got.text);
    } catch {
      msgs = undefined; // not JSON (a proxy's "batches not supported" page): a refusal of the batch, as below
    } finally {
      this.answers.give(got.bytes);
    }
    if (!Array.isArray(msgs)) {
      // Refused for its size (its words say so): batches are made smaller from now on, and these calls sent again so.
      const size = batchRefusal((msgs as { error?: RpcErrorObject } | undefined)?.error);
      if (size) {
        this.maxBatch = Math.max(1, Math.min(size.calls ?? Math.floor(batch.length / 2), batch.length - 1));
        return this.sendChunks(batch);
      }
      // Refused as a whole: light reads stop sharing node requests for a while (each would be sent twice).
      this.soloUntil = Date.now() + BATCHES_REFUSED_REST_MS;
    }
    // Too deep somewhere: each call is sent again alone, and the deep one fails alone.
    if (Array.isArray(msgs) && nestedDeeperThan(got.text, MAX_ANSWER_DEPTH + 1)) msgs = undefined;
    // Answers in any order, matched by id: the ids of a batch are consecutive (unless they wrapped), so an answer's
    // place is its id less the first, checked against the id sent there; no map per batch.
    const byPlace = new Array<any>(batch.length);
    if (Array.isArray(msgs)) {
      for (const m of msgs) {
        if (!m || typeof m !== 'object') continue;
        const id = (m as { id?: unknown }).id;
        const at = typeof id === 'number' ? id - ids[0] : -1;
        if (at >= 0 && at < batch.length && ids[at] === id) byPlace[at] = m;
        else if (typeof id === 'number') { const j = ids.indexOf(id); if (j >= 0) byPlace[j] = m; }
      }
    }
    for (let i = 0; i < batch.length; i++) {
      const m = byPlace[i];
      if (m === undefined || batchRefused(m) || (lane && garbledOverLane(m))) {
        void this.sendOne(batch[i], lane);
        continue;
      }
      try {
        batch[i].resolve(toAnswer(m));
      } catch (err) {
        batch[i].reject(err);
      }
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([this.pool.destroy(), this.lane?.close()]);
  }
}

/**
 * One request, the answer's body as text, whatever its status (a node's JSON-RPC errors may come with any).
 * Through `dispatch` with a handler that only collects chunks: `pool.request()` + `body.text()` builds a
 * stream, parsed headers and their promises per call, ~8 µs of CPU per upstream call on the bench machine
 * (docs/performance.md), for a body that is read whole anyway.
 */
function postText(pool: Pool, opts: Dispatcher.DispatchOptions, budget: AnswerBudget, signal: CallSignal | undefined, settled: () => void): Promise<Answered> {
  return new Promise((resolve, reject) => {
    // What this answer holds of the budget; given back here when it fails (`drop`), else by the caller once parsed.
    const held: Held = { chunks: [], bytes: 0, budget };
    // Aborted: the request is not sent if still queued, else its connection is closed (the node sees it go).
    let unlisten: (() => void) | undefined;
    pool.dispatch(opts, {
      onRequestStart(controller) {
        drop(held);
        if (!signal) return;
        if (signal.aborted) return controller.abort(signal.reason as Error);
        unlisten?.();
        unlisten = signal.onAbort(() => controller.abort(signal.reason as Error));
      },
      onResponseStart(controller, status, headers) {
        drop(held);
        // "Not now" from the node or a proxy in front of it: no JSON-RPC answer to pass on; another upstream may answer.
        if (status === 429 || status === 502 || status === 503 || status === 504) {
          const after = headers['retry-after'];
          controller.abort(new NodeHttpError(status, retryAfterMs(Array.isArray(after) ? after[0] : after)));
        }
      },
      onResponseData(controller, chunk) {
        if (held.bytes + chunk.length > budget.maxAnswerBytes) {
          drop(held); // let go of what was read at once
          return controller.abort(new AnswerTooLarge());
        }
        if (!budget.take(chunk.length)) {
          drop(held);
          return controller.abort(new AnswersBusy());
        }
        held.bytes += chunk.length;
        held.chunks.push(chunk);
      },
      onResponseEnd() { unlisten?.(); settled(); resolve({ text: decoded(held.chunks), bytes: held.bytes }); },
      onResponseError(_c, err) { unlisten?.(); settled(); drop(held); reject(err); },
    });
  });
}

/**
 * An answer's chunks as one string. Several are decoded one by one and joined, not concatenated first: a large
 * answer's bytes copied whole would be one more large buffer per answer, held until a full collection; the pieces'
 * strings are small and go at the next scavenge.
 */
function decoded(chunks: Buffer[]): string {
  if (chunks.length === 1) return chunks[0].toString('utf8');
  const d = new StringDecoder('utf8');
  const parts = new Array<string>(chunks.length + 1);
  for (let i = 0; i < chunks.length; i++) parts[i] = d.write(chunks[i]);
  parts[chunks.length] = d.end();
  return parts.join('');
}

/** undici's codes for connections it closes itself (idle, aborted, timed out, destroyed), not the node. */
const OWN_CLOSES = new Set<unknown>(['UND_ERR_INFO', 'UND_ERR_ABORTED', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_DESTROYED', 'UND_ERR_CLOSED']);

/** A URL's `user:password@` as a Basic `Authorization` value (RFC 7617), decoded as URLs encode them; undefined without. */
function basicAuthorization(u: URL): string | undefined {
  if (!u.username && !u.password) return undefined;
  const decode = (s: string) => { try { return decodeURIComponent(s); } catch { return s; } };
  return 'Basic ' + Buffer.from(`${decode(u.username)}:${decode(u.password)}`).toString('base64');
}

const hasHeader = (headers: Readonly<Record<string, string>> | undefined, name: string) =>
  headers !== undefined && Object.keys(headers).some((k) => k.toLowerCase() === name);

/** An answer's chunks as they arrive, and the bytes of the budget they hold. */
interface Held { chunks: Buffer[]; bytes: number; budget: AnswerBudget }

/** Lets go of what was read of an answer, and gives its bytes back to the budget. */
function drop(h: Held): void {
  h.chunks = [];
  h.budget.give(h.bytes);
  h.bytes = 0;
}

/** An answer's text and the bytes of the budget it holds. */
interface Answered { text: string; bytes: number }

/** An answer body cut off at the limit (the connection is closed; nothing more of it is read). */
class AnswerTooLarge extends Error {}
/** An answer cut off because the answers held for all calls reached rpc.maxAnswerBytesInFlight. */
class AnswersBusy extends Error {}

/**
 * The result's JSON text, cut out of the node's answer when it is exactly `{"jsonrpc":"2.0","id":ID,"result":…}`
 * (what anvil, geth and reth send), so that it is not stringified again: JSON.stringify of a parsed 160 kB block
 * of 200 transactions takes ~340 µs (docs/performance.md). JSON.parse has already accepted the whole text, and the
 * answer has no member but these three, so what lies between `"result":` and the closing brace is the result.
 */
function resultText(text: string, id: number, msg: object): string | undefined {
  const head = `{"jsonrpc":"2.0","id":${id},"result":`;
  if (!text.startsWith(head)) return undefined;
  let end = text.length - 1;
  while (end > head.length && text.charCodeAt(end) <= 32) end--; // geth ends its answers with a newline
  if (text.charCodeAt(end) !== 125 /* } */ || Object.keys(msg).length !== 3) return undefined;
  return text.slice(head.length, end);
}
