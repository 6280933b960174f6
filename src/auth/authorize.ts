import { GatewayError } from '../errors/gateway-error.ts';
import { contractsNamed } from '../methods/contracts-named.ts';
import { keyRangeRefusal, type KnownHead } from '../methods/get-logs-bounds.ts';
import type { ContractParam } from '../methods/method-spec.ts';
import { ipAllowed } from './ip-allowlist.ts';
import type { JwtChecks } from './jwt.ts';
import type { CallRules, ResolvedKey } from './key-resolver.ts';

/** A request's headers by lowercase name, as node:http gives them. */
export type RequestHeaders = { readonly [name: string]: string | string[] | undefined };

/** What of an HTTP request (or a WebSocket's upgrade) the key's restrictions look at. */
export interface Caller {
  ip: string;
  origin: string | undefined;
  network: string;
  /** Read only for a key with a user-agent allowlist (`user-agent`) or a JWT (`authorization`). */
  headers: RequestHeaders;
}

/**
 * Request-level authorization (docs/decisions.md §6): the endpoint needs `rpc`; the caller's IP, browser origin, the
 * network and the user agent must be in the key's allowlists when it has them (403, -32011, with the reason); a key
 * that requires a JWT needs a valid one (401, -32010, with the reason: `jwts` answers at once for a token verified
 * before, else a promise). A key without these rules pays a property test for each.
 */
export function authorizeRequest(k: ResolvedKey, caller: Caller, jwts: JwtChecks): void | Promise<void> {
  if (!k.rpc) forbid('the key lacks the rpc permission');
  if (k.ipRanges && !ipAllowed(caller.ip, k.ipRanges)) forbid(`IP address ${caller.ip} is not in the key's allowlist`);
  if (k.origins && (!caller.origin || !k.origins.has(caller.origin))) {
    forbid(caller.origin ? `origin ${caller.origin.slice(0, 200)} is not in the key's allowlist` : 'the key only accepts requests from its allowed origins');
  }
  if (k.networks && !k.networks.has(caller.network)) forbid(`network ${caller.network} is not allowed for this key`);
  // Out of line: the request path of a key without these rules stays as small as it was (V8 inlines by size).
  if (k.userAgents || k.jwt) return byHeaders(k, caller.headers, jwts);
}

/** The rules that read headers: the user agent, then the JWT (the dearest check last). */
function byHeaders(k: ResolvedKey, headers: RequestHeaders, jwts: JwtChecks): void | Promise<void> {
  if (k.userAgents) {
    const ua = one(headers['user-agent']);
    if (!userAgentAllowed(ua, k.userAgents)) forbid(ua ? `user agent ${ua.slice(0, 200)} is not in the key's allowlist` : 'the key only accepts requests from its allowed user agents');
  }
  if (k.jwt) return jwts.check(k.jwt, one(headers.authorization));
}

/** Item-level authorization: the key's method allowlist and denylist, and `debug_*` only on plans that include them. */
export function authorizeMethod(k: ResolvedKey, method: string, debug: boolean): void {
  if (k.methods && !k.methods.has(method)) forbid(`method ${method} is not allowed for this key`);
  if (k.denied && k.denied.has(method)) forbid(`method ${method} is denied for this key`);
  if (debug && !k.plan.debugMethods) forbid(`debug methods are not included in the ${k.plan.name} plan`);
}

/** What of a method the call rules read: its spec's contracts and log range fields. */
export interface CallFacts {
  readonly contracts?: ContractParam;
  readonly logRange?: number;
}

/**
 * Item-level authorization of a call's params, once validated, for a key with call rules (`ResolvedKey.calls`;
 * others never come here): the contracts it names in the key's contract allowlist (403 naming the first that is
 * not), its eth_getLogs range within the key's (-32005 naming a range that fits).
 */
export function authorizeCall(rules: CallRules, spec: CallFacts, params: readonly unknown[], head: KnownHead): void {
  if (rules.contracts && spec.contracts) {
    const named = contractsNamed(spec.contracts, params);
    if (named === 'every') forbid("the key reads the logs of its allowed contracts only: name them in the filter's address");
    if (named === 'creation') forbid('the key calls its allowed contracts only: a contract creation is not one');
    if (named === 'unknown') forbid("the transaction's contract cannot be read, and the key calls its allowed contracts only");
    for (const a of named) if (!rules.contracts.has(a)) forbid(`contract ${a.slice(0, 42)} is not in the key's allowlist`);
  }
  if (rules.logsRange !== undefined && spec.logRange !== undefined) {
    const refusal = keyRangeRefusal(rules.logsRange, params[spec.logRange], head);
    if (refusal) throw refusal;
  }
}

/** Any of the key's parts found in the User-Agent, case aside (`parts` are kept lowercase). */
function userAgentAllowed(ua: string | undefined, parts: readonly string[]): boolean {
  if (!ua) return false;
  const lower = ua.toLowerCase();
  return parts.some((p) => lower.includes(p));
}

/** A header's one value (node:http joins repeated ones but for a few, which come as a list: the first then). */
const one = (h: string | string[] | undefined) => (typeof h === 'string' ? h : h?.[0]);

function forbid(detail: string): never {
  throw new GatewayError('FORBIDDEN', { detail });
}
