import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authorizeRequest } from '../auth/authorize.ts';
import type { KeyResolver, ResolvedKey } from '../auth/key-resolver.ts';
import { UnknownKeyGuard } from '../auth/unknown-key-guard.ts';
import type { Metrics } from '../analytics/metrics.ts';
import type { RefusalLog } from '../analytics/refusal-log.ts';
import type { UsageRecorder } from '../analytics/usage-recorder.ts';
import type { Config } from '../config/schema.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Limits } from '../limits/limits.ts';
import type { RateDecision } from '../limits/rate-limiter.ts';
import { frameBody, type FramedItem } from '../rpc/framing.ts';
import { responseJson } from '../rpc/respond.ts';
import { ResponseBudget, SMALL_BYTES, type RequestBytes } from '../rpc/response-budget.ts';
import { sendAnswers, type Answer } from '../rpc/send-answers.ts';
import { executeItem, prepareItem, type PreparedCall, type RequestContext } from '../rpc/pipeline.ts';
import { RequestDeadline, untilAborted } from '../rpc/deadline.ts';
import type { Network, Networks } from '../chain/networks.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import { sendError } from './send-error.ts';

interface Params { network: string; apikey?: string }

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * What the admission stage decided before the body was read: the network, the caller's key, and the units
     * already spent on reading the body (`credit`, with the bucket's decision), when limits are on.
     */
    admitted?: { network: Network; key: ResolvedKey; credit: number; decision?: RateDecision };
  }
}

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** Errors of the execute stage that refuse a call by the gateway's own rules, before a node does any work for it. */
const REFUSED_AFTER_LIMIT: ReadonlySet<string> = new Set(['FILTER_LIMIT', 'FILTER_NOT_FOUND']);


export interface RpcRouteDeps {
  config: Readonly<Config>;
  networks: Networks;
  keys: KeyResolver;
  /** Absent when `limits.enabled` is false: the stage then costs nothing. */
  limits: Limits | undefined;
  /** Usage per key, network, method and outcome (analytics); absent when `analytics.enabled` is false. */
  usage?: UsageRecorder;
  metrics?: Metrics;
  refusals?: RefusalLog;
}

/**
 * The JSON-RPC endpoint, `POST /v1/{network}/{apikey}` and its aliases (docs/decisions.md §2). The request-level stages
 * run here in order (content type → parse → network → authenticate/authorize → limit), the item stages in
 * rpc/pipeline.ts; docs/pipeline.md draws the whole.
 */
export function registerRpcRoutes(app: FastifyInstance, deps: RpcRouteDeps) {
  const { config, networks, keys, limits, usage, metrics, refusals } = deps;
  const maxBatch = config.rpc.maxBatchSize;
  const concurrency = config.rpc.batchConcurrency;
  const invalidCost = config.limits.invalidCost;
  const bytesPerUnit = config.limits.bodyBytesPerUnit;
  const refusalDelayMs = config.limits.refusalDelayMs;
  const requestTimeoutMs = config.rpc.requestTimeoutMs;
  /** What reading and framing a body of `bytes` costs: the least any request costs (issue 17). */
  const framingCost = (bytes: number) => invalidCost + Math.floor(bytes / bytesPerUnit);
  const responses = new ResponseBudget(config.rpc.maxResponseBytes, config.rpc.maxResponseBytesInFlight);
  const guard = new UnknownKeyGuard(config.limits.unknownKeys.perSecond, config.limits.unknownKeys.burst);

  /**
   * The request-level stages that need no body (content type → network → authenticate → authorize), run as the
   * request arrives (`onRequest`), before its body is read or parsed: a request without a valid key costs a hash
   * and a lookup, never a read of its body. Unknown keys are limited per client IP (docs/decisions.md §7), counted only
   * on failures: a valid key is never refused because its address is shared with someone guessing.
   */
  const admit = async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    // A refusal here closes the connection when a body is on its way: keeping it open would mean reading (and
    // throwing away) the whole body to find the next request, the very work a refusal before the body saves.
    const refuse = (e: GatewayError) => {
      if (req.headers['content-length'] !== '0' && (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined)) {
        reply.header('connection', 'close');
        // Stop pulling the body off the wire now: on loopback a 1 MiB body is all in the kernel before the headers
        // are handled, and reading it only to throw it away cost a refused attacker's victims ~x2.5 (issue 17).
        req.raw.socket?.pause();
      }
      return sendLimitedError(reply, e, null);
    };
    let { network: netName, apikey } = req.params;
    // `/v1/{network}` without a key matches `/{network}/{apikey}` with network "v1".
    if (netName === 'v1' && req.routeOptions.url === '/:network/:apikey') [netName, apikey] = [apikey!, undefined];

    // Stage content-type (docs/decisions.md §2: application/json with any charset, or absent).
    const type = req.headers['content-type'];
    if (type !== undefined && !JSON_TYPE.test(type)) return refuse(new GatewayError('UNSUPPORTED_MEDIA_TYPE', { type: type.slice(0, 64) }));

    // Stage network.
    const network = networks.get(netName);
    if (!network) return refuse(new GatewayError('UNKNOWN_NETWORK', { network: netName.slice(0, 64) }));

    // Stage authenticate, then authorize what applies to the whole request (docs/decisions.md §6).
    let key: ResolvedKey;
    try {
      key = await keys.resolve(apikey);
    } catch (err) {
      const e = asGatewayError(err, req);
      // An address that has spent its failures learns nothing more: 429, whatever the wrong key it tried.
      const retryAfter = e.status === 401 ? guard.failed(req.ip) : undefined;
      return refuse(retryAfter === undefined ? e : guard.refusal(retryAfter));
    }
    try {
      authorizeRequest(key, { ip: req.ip, origin: req.headers.origin, network: network.name });
    } catch (err) {
      return refuse(asGatewayError(err, req));
    }
    // Stage limit, at admission (issue 17): the key's bucket pays for reading its body before it is read, from the
    // Content-Length (a chunked body pays for its size once read). An empty bucket: 429, the body never read.
    if (!limits) {
      req.admitted = { network, key, credit: 0 };
      return;
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    const credit = framingCost(Number.isFinite(declared) ? declared : 0);
    try {
      const decision = await limits.admitBody(key, credit);
      req.admitted = { network, key, credit, decision };
    } catch (err) {
      const e = asGatewayError(err, req);
      if (e.status === 429) {
        metrics?.refused(network.name);
        refusals?.refused(key.key.id, key.account.id, network.name);
        // Held a little before the answer (at most limits.refusalDelayMs, never past when a retry could pass): a
        // key that keeps sending into an empty bucket then costs a few refusals a second per connection, not
        // hundreds (each one a connection, headers and a key lookup; issue 17's x3 on another tenant's p50).
        const wait = Math.min(refusalDelayMs, (err as { decision?: RateDecision }).decision?.retryAfterMs ?? 0);
        if (wait > 0) await sleep(wait);
      }
      return refuse(e);
    }
  };

  /**
   * Stage record, off the answer's path: each item's outcome and units to the usage recorder and the metrics (a
   * Map lookup and a few additions each; the store sees them in batches). `units(i)`: what item i cost.
   */
  const record = (t0: number, network: Network, key: ResolvedKey, items: FramedItem[], answers: Array<Answer | undefined>, units: (i: number) => number) => {
    const ms = performance.now() - t0;
    metrics?.request(network.name, ms / 1000);
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      // Only names the network knows are labels: a caller cannot grow the tables with made-up method names.
      const method = 'method' in item && network.methods.has(item.method) ? item.method : '(invalid)';
      const code = answers[i]?.answer.error?.code ?? 0;
      const u = units(i);
      usage?.record(key.account.id, key.key.id, network.name, method, code, u, ms);
      metrics?.item(network.name, method, code, u);
    }
  };

  const handler = async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    const t0 = performance.now();
    const { network, key, credit } = req.admitted!;
    const body = req.body as Buffer | undefined;
    const sizeCost = framingCost(body?.length ?? 0);
    /** A body refused as a whole is metered like an invalid item, plus its size (a chunked one pays that now). */
    const refuseBody = async (e: GatewayError) => {
      if (limits && req.admitted!.decision) rateHeaders(reply, req.admitted!.decision);
      if (limits && sizeCost > credit) await limits.admit(key, sizeCost, credit).then((d) => rateHeaders(reply, d), () => {});
      return sendError(reply, e);
    };
    // Stage parse: the whole body, framed into items (docs/decisions.md §3).
    let framed;
    try {
      framed = frameBody(body, maxBatch);
    } catch (err) {
      return refuseBody(err as GatewayError);
    }
    const { items, batch } = framed;
    const firstId = batch ? null : items[0].id;

    const origin = req.headers.origin;
    // A key restricted to origins answers CORS for its own origin only (docs/decisions.md §2).
    if (key.origins && origin) reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
    if (batch && items.length > key.plan.maxBatchSize) {
      const detail = `batch of ${items.length} requests exceeds the limit of ${key.plan.maxBatchSize} of the ${key.plan.name} plan`;
      return refuseBody(new GatewayError('INVALID_REQUEST', { detail }));
    }

    // Item stages before the limit: method, authorize, validate. A refused item costs `invalidCost` (1 unit),
    // not its method's: answering it is work too, and a flood of invalid items is limited like any other.
    const ctx: RequestContext = { network, key, requestId: req.id };
    const answers = new Array<Answer | undefined>(items.length);
    const prepared: Array<PreparedCall | undefined> = new Array(items.length);
    // The body's size units (0 under limits.bodyBytesPerUnit) are part of its cost, as reading it was work.
    let cost = sizeCost - invalidCost;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if ('error' in item) { answers[i] = failed(item.error); cost += invalidCost; continue; }
      try {
        const p = prepareItem(ctx, item);
        prepared[i] = p;
        cost += p.entry.cost;
      } catch (err) {
        answers[i] = failed(asGatewayError(err, req));
        cost += invalidCost;
      }
    }

    // Stage limit: the request's exact units against the key's bucket and the account's quota, as a whole; the
    // units spent at admission count towards them, and stay spent if the request is refused now.
    if (limits) {
      let decision: RateDecision;
      try {
        decision = await limits.admit(key, cost, credit);
      } catch (err) {
        const e = asGatewayError(err, req);
        if (e.status === 429) {
          // Refused for its items' cost, a request costs only the size units of its body (0 under
          // limits.bodyBytesPerUnit): a client offered more than its rate still gets its rate (docs/decisions.md §7),
          // and a big body is never read for free.
          limits.refund(key, Math.min(credit, invalidCost));
          metrics?.refused(network.name);
          refusals?.refused(key.key.id, key.account.id, network.name);
          const refusedAnswer = failed(e);
          record(t0, network, key, items, items.map(() => refusedAnswer), () => 0);
        }
        return sendLimitedError(reply, e, firstId);
      }
      rateHeaders(reply, decision);
    }

    // Item stages after the limit, concurrently but bounded; answers keep request order. Each answer is
    // serialised as it arrives and counted against the response budget (rpc.maxResponseBytes, and
    // rpc.maxResponseBytesInFlight for all requests): one that does not fit is answered with an error instead.
    let refund = 0;
    let refunded: Set<number> | undefined;
    const held = responses.forRequest();
    const pieces = new Array<string | Buffer | undefined>(items.length);
    // The deadline (issue 18): the request's budget, each call's own, and the caller leaving abort the node calls.
    const deadline = new RequestDeadline(requestTimeoutMs);
    const gone = () => { if (!reply.raw.writableFinished) deadline.callerGone(); };
    reply.raw.once('close', gone);
    await forEachBounded(items.length, concurrency, deadline.signal, async (i) => {
      const p = prepared[i];
      if (!p) return;
      const d = deadline.forCall(p.entry.timeoutMs);
      try {
        const answer = await untilAborted(executeItem(ctx, p, d.signal), d.signal);
        answers[i] = { answer, status: 200 };
        if (!items[i].notification) pieces[i] = fitAnswer(held, items[i], answer, p.call.method, answers, i);
      } catch (err) {
        const e = asGatewayError(err, req);
        answers[i] = failed(e);
        // Refused by the gateway's own rules before any node work: costs what an invalid item costs.
        if (REFUSED_AFTER_LIMIT.has(e.entry)) {
          refund += Math.max(0, p.entry.cost - invalidCost);
          (refunded ??= new Set()).add(i);
        }
      } finally {
        d.done();
      }
    });
    deadline.end();
    reply.raw.off('close', gone);
    // Items not started once the request's time was up (or its caller gone) did no node work: an invalid item's cost.
    if (deadline.signal.aborted) {
      for (let i = 0; i < items.length; i++) {
        if (!prepared[i] || answers[i]) continue;
        answers[i] = failed(deadline.signal.reason);
        refund += Math.max(0, prepared[i]!.entry.cost - invalidCost);
        (refunded ??= new Set()).add(i);
      }
    }
    if (refund > 0) limits?.refund(key, refund);
    // docs/decisions.md §9: a single request says whether its answer came from the cache.
    if (!batch && prepared[0]?.cache) {
      reply.header('x-cache', prepared[0].cache);
      metrics?.cacheLookup(network.name, prepared[0].cache);
    }
    if (usage || metrics) record(t0, network, key, items, answers, (i) => (prepared[i] && !refunded?.has(i) ? prepared[i]!.entry.cost : invalidCost));
    return sendAnswers(reply, framed.batch, items, answers as Answer[], pieces, held);
  };

  /**
   * An item's answer serialised, if it fits the request's response budget; else its answer becomes -32005
   * answer_too_large (this request's share is spent) or answers_busy (all requests' is), and the parsed
   * answer is let go at once.
   */
  const fitAnswer = (held: RequestBytes, item: FramedItem, answer: UpstreamAnswer, method: string, answers: Array<Answer | undefined>, i: number): string | Buffer | undefined => {
    // A node's big result is weighed before an answer is built of it: most will not fit once the budget is spent.
    const raw = answer.raw;
    const json = raw !== undefined && raw.length > SMALL_BYTES ? undefined : responseJson(item.id, answer);
    const bytes = json === undefined ? Buffer.byteLength(raw!) + ENVELOPE_BYTES : json.length > 4096 ? Buffer.byteLength(json) : json.length;
    const fit = held.fit(bytes);
    if (fit === 'ok') return json === undefined ? Buffer.from(responseJson(item.id, answer)) : json.length > SMALL_BYTES ? Buffer.from(json) : json;
    const e = fit === 'too_large'
      ? new GatewayError('RESPONSE_TOO_LARGE', { limit: responses.perRequest, method })
      : new GatewayError('RESPONSES_BUSY', { limit: responses.total });
    answers[i] = failed(e);
    return undefined;
  };

  for (const url of ['/v1/:network/:apikey', '/:network/:apikey', '/v1/:network', '/v1/:network/']) app.post(url, { onRequest: admit }, handler);
}

/** At most what `{"jsonrpc":"2.0","id":…,"result":…}` adds to a result: an id is at most a few dozen characters. */
const ENVELOPE_BYTES = 128;

const failed = (e: GatewayError): Answer => ({ answer: { error: e.toJSON() }, status: e.status });

function asGatewayError(err: unknown, req: FastifyRequest): GatewayError {
  if (err instanceof GatewayError) return err;
  req.log.error({ err }, 'unexpected error in the request pipeline');
  return new GatewayError('INTERNAL');
}

/** 429s carry Retry-After (whole seconds, at least 1) and, from the bucket, the RateLimit headers. */
function sendLimitedError(reply: FastifyReply, err: GatewayError, id: FramedItem['id']): FastifyReply {
  if (err.status === 429) {
    const retryAfter = Number(err.data.retryAfter ?? 1);
    reply.header('retry-after', String(Math.max(1, Math.ceil(retryAfter))));
    const decision = (err as GatewayError & { decision?: RateDecision }).decision;
    if (decision) rateHeaders(reply, decision);
  }
  return sendError(reply, err, id);
}

function rateHeaders(reply: FastifyReply, d: RateDecision): void {
  reply.header('ratelimit-limit', String(d.limit)).header('ratelimit-remaining', String(d.remaining)).header('ratelimit-reset', String(d.resetSeconds));
}

/** Runs fn(0..n-1) with at most `limit` in flight; none starts once `signal` has aborted. */
async function forEachBounded(n: number, limit: number, signal: AbortSignal, fn: (i: number) => Promise<void>): Promise<void> {
  if (n === 1) return fn(0);
  let next = 0;
  const worker = async () => {
    while (next < n && !signal.aborted) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
}
