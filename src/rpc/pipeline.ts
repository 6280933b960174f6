import { GatewayError } from '../errors/gateway-error.ts';
import { authorizeMethod } from '../auth/authorize.ts';
import type { ResolvedKey } from '../auth/key-resolver.ts';
import type { Network } from '../upstream/networks.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import type { Next } from './adapters/adapter.ts';
import type { RpcCall } from './framing.ts';
import type { MethodEntry } from './methods/method-table.ts';

/** What every item of one HTTP request shares: decided once per request, before the items run. */
export interface RequestContext {
  network: Network;
  key: ResolvedKey;
  requestId: string;
}

/**
 * The item stages of the request pipeline, in order (docs/pipeline.md). Request-level stages (content type,
 * body size, parse, network, authenticate) run before, in http/rpc-route.ts; each item of a batch then goes
 * through these, independently. A stage answers by throwing a GatewayError; later stages (limit, cache) slot in
 * between `validate` and `forward` without touching the others.
 */
export async function runItem(ctx: RequestContext, call: RpcCall): Promise<UpstreamAnswer> {
  const entry = resolveMethod(ctx, call);
  authorizeMethod(ctx.key, entry.name, entry.debug);
  validate(entry, call);
  return forward(ctx, entry, call);
}

/** Stage `method`: only allowed methods exist (DECISIONS 4). */
function resolveMethod(ctx: RequestContext, call: RpcCall): MethodEntry {
  const entry = ctx.network.methods.get(call.method);
  if (!entry) throw new GatewayError('METHOD_NOT_FOUND', { method: truncate(call.method) });
  return entry;
}

/** Stage `authorize` is auth/authorize.ts `authorizeMethod`: the key's method allowlist, debug methods and the plan. */

/** Stage `validate`: params against the method's schemas, before any upstream is asked. */
function validate(entry: MethodEntry, call: RpcCall): void {
  const err = entry.validate(call.params);
  if (err) throw err;
}

/** Stage `forward`: to the network's node, through the method's adapter if it has one. */
function forward(ctx: RequestContext, entry: MethodEntry, call: RpcCall): Promise<UpstreamAnswer> {
  const upstream = ctx.network.upstream;
  if (!entry.adapter) return upstream.call(call.method, call.params, entry.timeoutMs);
  const next: Next = (method, params) => upstream.call(method, params, entry.timeoutMs);
  return entry.adapter(call.method, call.params, next);
}

/** A method name is echoed in the error message; a megabyte of it is not. */
const truncate = (s: string) => (s.length > 64 ? s.slice(0, 64) + '…' : s);
