import type { SubscriptionSession } from '../subscriptions/subscriptions.ts';
import { authorizeCall, authorizeMethod } from '../auth/authorize.ts';
import type { ResolvedKey } from '../auth/key-resolver.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Network } from '../networks/networks.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import type { CacheLookup, NetworkCache } from '../cache/response-cache.ts';
import type { Call, Next, Stage } from './call.ts';
import type { RpcCall } from './framing.ts';
import type { MethodEntry } from '../networks/method-table.ts';
import { cacheStage } from './stages/cache.ts';
import { headSeenStage } from './stages/head-seen.ts';
import { clusterHeadStage } from './stages/cluster-head.ts';
import { forward, local } from './stages/node.ts';
import { refusedByRulesStage } from './stages/refused-by-rules.ts';
import { writeSentStage } from './stages/write-sent.ts';
import { tracing } from '../tracing/tracing.ts';
import { tracedLast, tracedStage } from './traced-stage.ts';

/** What every item of one request shares: decided once per request, before the items run. */
export interface RequestContext {
  network: Network;
  key: ResolvedKey;
  requestId: string;
  /** The caller's socket, for the subscription methods (absent over HTTP). */
  session?: SubscriptionSession;
  /** The client's address, by which its responses' bytes are counted (rpc/response-budget.ts). */
  ip: string;
}

/** An item that passed the checks of `prepareItem`: its method's entry (its cost, how to run it). */
export interface PreparedCall {
  call: RpcCall;
  entry: MethodEntry;
}

/**
 * The item stages before the limit (docs/pipeline.md): `method` → `authorize` → `validate` → `authorize params` (keys
 * with call rules only: the contracts a call names, its eth_getLogs range). A stage refuses by throwing a
 * GatewayError, which becomes that item's answer and costs an invalid item's units.
 */
export function prepareItem(ctx: RequestContext, call: RpcCall): PreparedCall {
  const entry = ctx.network.methods.get(call.method);
  // Only allowed methods exist (docs/decisions.md §4).
  if (!entry) throw new GatewayError('METHOD_NOT_FOUND', { method: truncate(call.method) });
  authorizeMethod(ctx.key, entry.name, entry.trace);
  // Params against the method's schemas, before any upstream is asked.
  if (call.paramsNotArray) throw new GatewayError('INVALID_PARAMS', { detail: 'params must be an array' });
  const err = entry.validate(call.params);
  if (err) throw err;
  const rules = ctx.key.calls;
  if (rules) authorizeCall(rules, entry, call.params, ctx.network.head);
  return { call, entry };
}

/**
 * The item stages after the limit, as data: for each method of the network, its ordered list of stages, built once
 * at start-up (docs/pipeline.md). A stage the network or the method does not need is not in its list:
 *   [cluster] → [write] → [cache] → [head] → forward   (methods a node answers)
 *   [cluster] → rules → [head] → local                 (methods the gateway answers itself: filters)
 * `cluster` only in cluster mode for methods whose answer depends on the head, `write` only for methods that send
 * a transaction, `cache` only with `cache.enabled`, `head` only for methods whose answers may show a block, or in
 * cluster mode. Every transport runs calls through this, and nothing else,
 * always under a deadline that the run stage keeps around the list (rpc/run.ts: `deadline`, one for the items of a
 * batch that start together, not a promise per call).
 */
export function buildPipeline(network: Network): NetworkPipeline {
  const runners = new Map<string, Next>();
  const atOnce = new Map<string, (params: unknown[]) => CacheLookup | undefined>();
  for (const spec of network.methods.values()) {
    const stages = stagesOf(network, spec);
    runners.set(spec.name, tracing.on ? composeTraced(network, stages, spec.local ? 'local' : 'forward') : compose(stages, spec.local ? local : forward));
    // A cache hit needs no promise when the cache is the first stage: an answer at hand is within any budget, and
    // the head stage (after the cache, if any) never sees a hit. Not behind the cluster's shared head (it may wait)
    // nor a write's stage.
    const cache = network.cache;
    if (cache && stages[0] === cacheStageOf(cache)) atOnce.set(spec.name, (params) => cache.lookup(spec.name, params));
  }
  return {
    run: (call) => runners.get(call.method)!(call),
    atOnce: (method, params) => atOnce.get(method)?.(params),
  };
}

/** A network's calls through their methods' stages (buildPipeline). */
export interface NetworkPipeline {
  run(call: Call): Promise<UpstreamAnswer>;
  /**
   * A call's cache lookup before any stage runs, where nothing needs to come before it: a hit is the call's answer
   * at once; a miss goes through `run` with it (`Call.looked`). undefined: nothing to look up first.
   */
  atOnce(method: string, params: unknown[]): CacheLookup | undefined;
}

/** The stages a method's calls pass on a network, in order. */
export function stagesOf(network: Network, spec: MethodEntry): Stage[] {
  const shared = network.head.shared && readsTheHead(spec) ? clusterHeadStage(network.head.shared, network.head) : undefined;
  const head = learnsTheHead(network, spec) ? [headSeenStage] : [];
  if (spec.local) return shared ? [shared, refusedByRulesStage, ...head] : [refusedByRulesStage, ...head];
  const stages: Stage[] = [];
  if (shared) stages.push(shared);
  if (spec.write) stages.push(writeSentStage);
  if (network.cache) stages.push(cacheStageOf(network.cache));
  stages.push(...head);
  return stages;
}

/**
 * The head stage has work for the method's answers: they may show a block (its spec's `seen` rule), or the network
 * is in cluster mode, where every answer waits until the block this instance learnt is announced. A balance or an
 * `eth_call` on one instance passes no head stage: a promise and a closure less per call.
 */
function learnsTheHead(network: Network, entry: MethodEntry): boolean {
  return network.head.shared !== undefined || entry.seen !== 'none';
}

/** One cache stage per network's cache, so that `buildPipeline` can tell it is a method's first stage. */
const cacheStages = new WeakMap<NetworkCache, Stage>();
function cacheStageOf(cache: NetworkCache): Stage {
  let stage = cacheStages.get(cache);
  if (!stage) cacheStages.set(cache, (stage = cacheStage(cache)));
  return stage;
}

/**
 * Its answer may depend on the head (cluster mode reads the shared head first): every read but those whose answer
 * never changes (`forever`) or is found by a transaction's hash (a node behind is asked again of one ahead), and
 * not writes (their answer is the node's acceptance).
 */
function readsTheHead(entry: MethodEntry): boolean {
  if (entry.write || entry.socket) return false;
  return entry.cache !== 'forever' && entry.cache !== 'txHash';
}

/** `stages` around `last`, as undici composes interceptors: the first stage is the outermost. */
function compose(stages: Stage[], last: Next): Next {
  return stages.reduceRight<Next>((next, stage) => (call) => stage(call, next), last);
}

/** `compose`, each stage marking its passing on a traced request's span (rpc/traced-stage.ts). */
function composeTraced(network: Network, stages: Stage[], last: 'local' | 'forward'): Next {
  const name = (stage: Stage) => stage === headSeenStage ? 'head' : stage === writeSentStage ? 'write' : stage === refusedByRulesStage ? 'rules'
    : network.cache && stage === cacheStageOf(network.cache) ? 'cache' : 'cluster';
  return compose(stages.map((s) => tracedStage(name(s), s)), tracedLast(last, last === 'local' ? local : forward));
}

/** A method name is echoed in the error message; a megabyte of it is not. */
const truncate = (s: string) => (s.length > 64 ? s.slice(0, 64) + '…' : s);
