import type { CallSignal } from '../errors/on-abort.ts';
import type { CallAborted } from '../errors/call-aborted.ts';
import type { CacheOutcome } from '../cache/response-cache.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import { asGatewayError, type Arrival } from './admit.ts';
import type { Call } from './call.ts';
import type { RequestDeadline } from './deadline.ts';
import type { EndpointDeps } from './endpoint-deps.ts';
import { failed, type Framed, type Limited } from './frame-and-limit.ts';
import type { FramedItem } from './framing.ts';
import { buildPipeline } from './pipeline.ts';
import { recorder } from './record.ts';
import { responseJson } from './respond.ts';
import { SMALL_BYTES, type RequestBytes } from './response-budget.ts';
import type { Answer } from './send-answers.ts';

/** A request's answers, ready to be sent: serialised pieces held against the response budget. */
export interface Ran {
  answers: Answer[];
  pieces: Array<string | Buffer | undefined>;
  held: RequestBytes;
  /** A single request's cache outcome (its `X-Cache`). */
  cache?: CacheOutcome;
}

/** At most what `{"jsonrpc":"2.0","id":…,"result":…}` adds to a result: an id is at most a few dozen characters. */
const ENVELOPE_BYTES = 128;

/**
 * Stage run: the request's prepared items through their network's pipeline (built once per network at start-up),
 * concurrently but bounded (rpc.batchConcurrency), answers in request order, under the request's deadline: none
 * starts once it has aborted. Each answer is serialised as it arrives and counted against the response budget.
 * Refunds what the stages say did no node work; records every item.
 */
export function runner(deps: EndpointDeps) {
  const { config, limits, metrics, responses } = deps;
  const concurrency = config.rpc.batchConcurrency;
  const invalidCost = config.limits.invalidCost;
  const record = recorder(deps);
  const pipelines = new Map(deps.networks.list.map((n) => [n, buildPipeline(n)]));

  return async (f: Framed, l: Limited, deadline: RequestDeadline, t0: number, log: Arrival['log']): Promise<Ran> => {
    const { items } = f;
    const { ctx, prepared, answers } = l;
    const pipeline = pipelines.get(ctx.network)!;
    const calls = new Array<Call | undefined>(items.length);
    const held = responses.forRequest();
    const pieces = new Array<string | Buffer | undefined>(items.length);
    await forEachBounded(items.length, concurrency, deadline.signal, async (i) => {
      const p = prepared[i];
      if (!p) return;
      const signal = deadline.forCall(p.entry.timeoutMs);
      // Written out, not spread from ctx: one shape for every Call, and no copying helper per call on the hot path.
      const call: Call = {
        network: ctx.network, key: ctx.key, requestId: ctx.requestId, session: ctx.session,
        method: p.call.method, params: p.call.params, spec: p.entry, cost: p.entry.cost, signal,
        cache: undefined, refusedByRules: undefined, seenBlock: undefined,
      };
      calls[i] = call;
      try {
        const answer = await pipeline(call);
        answers[i] = { answer, status: 200 };
        if (!items[i].notification) pieces[i] = fit(held, items[i], answer, call.method, answers, i);
      } catch (err) {
        answers[i] = failed(asGatewayError(err, log));
      } finally {
        deadline.done(signal);
      }
    });
    deadline.end();
    // Items not started once the request's time was up (or its caller gone) did no node work.
    for (let i = 0; i < items.length; i++) if (prepared[i] && !answers[i]) answers[i] = failed(deadline.signal.reason as CallAborted);
    // What did no node work costs what an invalid item costs: refused by the gateway's rules, or never started.
    const units = (i: number) => (calls[i] && !calls[i]!.refusedByRules ? calls[i]!.cost : invalidCost);
    let refund = 0;
    for (let i = 0; i < items.length; i++) if (prepared[i]) refund += Math.max(0, prepared[i]!.entry.cost - units(i));
    if (refund > 0) limits?.refund(ctx.key, refund);
    // docs/decisions.md §9: a single request says whether its answer came from the cache.
    const cache = f.batch ? undefined : calls[0]?.cache;
    if (cache) metrics?.cacheLookup(ctx.network.name, cache);
    record(t0, ctx.network, ctx.key, items, answers, units);
    return { answers: answers as Answer[], pieces, held, cache };
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
    const bytes = json === undefined ? Buffer.byteLength(raw!) + ENVELOPE_BYTES : json.length > 4096 ? Buffer.byteLength(json) : json.length;
    const fits = held.fit(bytes);
    if (fits === 'ok') return json === undefined ? Buffer.from(responseJson(item.id, answer)) : json.length > SMALL_BYTES ? Buffer.from(json) : json;
    const e = fits === 'too_large'
      ? new GatewayError('RESPONSE_TOO_LARGE', { limit: responses.perRequest, method })
      : new GatewayError('RESPONSES_BUSY', { limit: responses.totalBytes });
    answers[i] = failed(e);
    return undefined;
  }
}

/** Runs fn(0..n-1) with at most `limit` in flight; none starts once `signal` has aborted. */
async function forEachBounded(n: number, limit: number, signal: CallSignal, fn: (i: number) => Promise<void>): Promise<void> {
  if (n === 1) return fn(0);
  let next = 0;
  const worker = async () => {
    while (next < n && !signal.aborted) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
}
