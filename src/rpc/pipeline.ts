import { authorizeMethod } from '../auth/authorize.ts';
import type { ResolvedKey } from '../auth/key-resolver.ts';
import type { CacheOutcome } from '../cache/response-cache.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Network } from '../chain/networks.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import type { Route } from '../chain/upstream-pool.ts';
import type { Next } from './adapters/adapter.ts';
import type { RpcCall } from './framing.ts';
import type { MethodEntry } from './methods/method-table.ts';

/** What every item of one HTTP request shares: decided once per request, before the items run. */
export interface RequestContext {
  network: Network;
  key: ResolvedKey;
  requestId: string;
}

/** An item that passed the checks of `prepareItem`: what it costs and how to run it. */
export interface PreparedCall {
  call: RpcCall;
  entry: MethodEntry;
  /** Set by the cache stage: whether the answer came from the cache (the `X-Cache` header of a single request). */
  cache?: CacheOutcome;
}

/**
 * The item stages before the limit (docs/pipeline.md): `method` → `authorize` → `validate`. Request-level stages
 * (content type, parse, network, authenticate) run before, in http/rpc-route.ts; then every item of a batch is
 * prepared, the request's `limit` stage weighs the prepared items together, and `executeItem` runs each one.
 * A stage refuses by throwing a GatewayError, which becomes that item's answer and costs nothing.
 */
export function prepareItem(ctx: RequestContext, call: RpcCall): PreparedCall {
  const entry = resolveMethod(ctx, call);
  authorizeMethod(ctx.key, entry.name, entry.debug);
  validate(entry, call);
  return { call, entry };
}

/**
 * The item stages after the limit: `local` (methods the gateway answers itself: filters) or `cache` → `forward`
 * (the chain module routes it to an upstream).
 */
export function executeItem(ctx: RequestContext, p: PreparedCall, signal?: AbortSignal): Promise<UpstreamAnswer> {
  const { entry, call } = p;
  const cache = ctx.network.cache;
  if (entry.local) {
    if (cache) p.cache = 'MISS'; // answered afresh, as every call is that the cache does not keep
    return entry.local(ctx, call.params, nodeOf(ctx, entry, signal)).then((a) => ctx.network.head.seen(call.method, call.params, a));
  }
  const answer = cache ? cache.run(call.method, call.params, () => forwardSeen(ctx, entry, call, signal), p) : forwardSeen(ctx, entry, call, signal);
  if (!entry.write) return answer;
  return answer.then((a) => {
    // The head is about to move (a block per transaction on automining chains), and the chain module's
    // subscribers (pending-transaction filters) hear of the transaction.
    if (a.error === undefined) ctx.network.chain.transactionSent(a.result);
    return a;
  });
}

/** `forward`, then the network's head learns of any block the answer shows (read-your-writes, docs/decisions.md §9). */
function forwardSeen(ctx: RequestContext, entry: MethodEntry, call: RpcCall, signal: AbortSignal | undefined): Promise<UpstreamAnswer> {
  return forward(ctx, entry, call, signal).then((a) => ctx.network.head.seen(call.method, call.params, a));
}

/** Stage `method`: only allowed methods exist (docs/decisions.md §4). */
function resolveMethod(ctx: RequestContext, call: RpcCall): MethodEntry {
  const entry = ctx.network.methods.get(call.method);
  if (!entry) throw new GatewayError('METHOD_NOT_FOUND', { method: truncate(call.method) });
  return entry;
}

/** Stage `validate`: params against the method's schemas, before any upstream is asked. */
function validate(entry: MethodEntry, call: RpcCall): void {
  if (call.paramsNotArray) throw new GatewayError('INVALID_PARAMS', { detail: 'params must be an array' });
  const err = entry.validate(call.params);
  if (err) throw err;
}

/** Stage `forward`: to the network's chain module (which routes to an upstream), through the method's adapter if it has one. */
function forward(ctx: RequestContext, entry: MethodEntry, call: RpcCall, signal: AbortSignal | undefined): Promise<UpstreamAnswer> {
  if (!entry.adapter) return ctx.network.chain.call(call.method, call.params, entry.timeoutMs, routeOf(ctx, signal));
  return entry.adapter(call.method, call.params, nodeOf(ctx, entry, signal));
}

/** Dedicated keys' calls go to the network's dedicated upstreams, where it has any. */
const DEDICATED = { dedicated: true };
const SHARED = {};
const routeOf = (ctx: RequestContext, signal?: AbortSignal): Route => {
  const dedicated = ctx.key.key.type === 'Dedicated';
  if (!signal) return dedicated ? DEDICATED : SHARED;
  return dedicated ? { dedicated, signal } : { signal };
};

/** The network's chain module, with the method's time-out and the call's deadline, for adapters and local methods. */
function nodeOf(ctx: RequestContext, entry: MethodEntry, signal: AbortSignal | undefined): Next {
  const chain = ctx.network.chain;
  const route = routeOf(ctx, signal);
  return (method, params) => chain.call(method, params, entry.timeoutMs, route);
}

/** A method name is echoed in the error message; a megabyte of it is not. */
const truncate = (s: string) => (s.length > 64 ? s.slice(0, 64) + '…' : s);
