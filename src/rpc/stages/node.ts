import type { Route } from '../../chain/upstream-pool.ts';
import type { UpstreamAnswer } from '../../upstream/upstream.ts';
import type { Next as NodeNext } from '../../methods/adapters/adapter.ts';
import type { Call } from '../call.ts';

/**
 * Dedicated keys' calls go to the network's dedicated upstreams, where it has any; the call's deadline goes along;
 * a call whose range may be split (eth_getLogs), or that the gateway answers with node calls of its own (a filter's
 * eth_getLogs), takes the way to charge further pieces.
 */
export const routeOf = (call: Call): Route => {
  const route: Route = call.key.dedicated ? { dedicated: true, signal: call.signal, answered: call } : { signal: call.signal, answered: call };
  if ((call.spec.splitsRange || call.spec.local) && call.charger) route.charge = (pieces, units) => charged(call, pieces, units);
  return route;
};

/**
 * `pieces` more node calls, charged to the caller before they go and counted in its cost: each at the call's own
 * units when it is the method split (its configured cost, limits.costs), else at the split method's declared cost.
 */
function charged(call: Call, pieces: number, each: number): void | Promise<void> {
  const units = pieces * (call.spec.splitsRange ? call.spec.cost : each);
  const paid = () => { call.cost += units; };
  const d = call.charger!.charge(call.key, units);
  return d instanceof Promise ? d.then(paid) : paid();
}

/** The network's chain module, with the method's budget and the call's deadline, for adapters and local methods. */
export function nodeOf(call: Call): NodeNext {
  const chain = call.network.chain;
  const route = routeOf(call);
  const timeoutMs = call.spec.timeoutMs;
  return (method, params) => chain.call(method, params, timeoutMs, route);
}

/** Stage `forward` (last): to the chain module (which routes to an upstream), through the method's adapter if it has one. */
export function forward(call: Call): Promise<UpstreamAnswer> {
  const adapter = call.spec.adapter;
  if (!adapter) return call.network.chain.call(call.method, call.params, call.spec.timeoutMs, routeOf(call), call.spec);
  return adapter(call.method, call.params, nodeOf(call));
}

/** Stage `local` (last, for methods the gateway answers itself: filters), with the node behind it. */
export function local(call: Call): Promise<UpstreamAnswer> {
  // Answered afresh, as every call is that the cache does not keep.
  if (call.network.cache) call.cache = 'MISS';
  return call.spec.local!(call, call.params, nodeOf(call));
}
