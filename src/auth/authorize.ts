import { GatewayError } from '../errors/gateway-error.ts';
import { ipAllowed } from './ip-allowlist.ts';
import type { ResolvedKey } from './key-resolver.ts';

/** What of an HTTP request the key's restrictions look at. */
export interface Caller {
  ip: string;
  origin: string | undefined;
  network: string;
}

/**
 * Request-level authorization (docs/decisions.md §6): the endpoint needs `rpc`; the caller's IP, browser origin and the
 * network must be in the key's allowlists when it has them. 403 (-32011) with the reason.
 */
export function authorizeRequest(k: ResolvedKey, caller: Caller): void {
  if (!k.key.permissions.includes('rpc')) forbid('the key lacks the rpc permission');
  if (k.ipRanges && !ipAllowed(caller.ip, k.ipRanges)) forbid(`IP address ${caller.ip} is not in the key's allowlist`);
  if (k.origins && (!caller.origin || !k.origins.has(caller.origin))) {
    forbid(caller.origin ? `origin ${caller.origin.slice(0, 200)} is not in the key's allowlist` : 'the key only accepts requests from its allowed origins');
  }
  if (k.networks && !k.networks.has(caller.network)) forbid(`network ${caller.network} is not allowed for this key`);
}

/** Item-level authorization: the key's method allowlist, and `debug_*` only on plans that include them. */
export function authorizeMethod(k: ResolvedKey, method: string, debug: boolean): void {
  if (k.methods && !k.methods.has(method)) forbid(`method ${method} is not allowed for this key`);
  if (debug && !k.plan.debugMethods) forbid(`debug methods are not included in the ${k.plan.name} plan`);
}

function forbid(detail: string): never {
  throw new GatewayError('FORBIDDEN', { detail });
}
