import type { SubscriptionSession } from '../subscriptions/subscriptions.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { authorizeRequest } from '../auth/authorize.ts';
import { KnownKeyRefusal, type ResolvedKey } from '../auth/key-resolver.ts';
import { UNKNOWN_NETWORK } from '../analytics/usage-recorder.ts';
import type { Network } from '../networks/networks.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { decisionOf } from '../limits/limit-refusal.ts';
import type { RateDecision } from '../shared-state/rate-limiter/rate-limiter.ts';
import type { RequestHeaders } from '../auth/authorize.ts';
import type { EndpointDeps } from './endpoint-deps.ts';
import type { RpcId } from './framing.ts';

/** What admission decided before the body was read: the network, the key, the units already spent on reading the body. */
export interface Admitted {
  network: Network;
  key: ResolvedKey;
  /** Units the key's bucket paid at admission for reading the body (0 when limits are off). */
  credit: number;
  /** The bucket's decision at admission, for the RateLimit headers. */
  decision?: RateDecision;
  /** The caller's socket (a WebSocket transport sets it), for the subscription methods. */
  session?: SubscriptionSession;
  /** The client's address (behind trusted proxies, the one they name): what its responses hold is counted by it. */
  ip: string;
}

/** A whole request refused: its error, the bucket's decision (RateLimit headers) when there is one, and its id. */
export interface Refusal {
  refused: GatewayError;
  decision?: RateDecision;
  id: RpcId;
}

/** What a transport knows of a request before its body: where it goes, who sends it, how big it says it is. */
export interface Arrival {
  network: string;
  apikey: string | undefined;
  contentType: string | undefined;
  ip: string;
  origin: string | undefined;
  /**
   * The request's headers as the transport has them (not copied): the `User-Agent` and `Authorization` a key's rules
   * read are looked up only for a key that has them.
   */
  headers: RequestHeaders;
  declaredBytes: number;
  /**
   * A body the transport will leave unread if the request is refused here (over UNREAD_BODY_BYTES, or of unknown
   * length), closing the connection: only then is a refusal held back (see below).
   */
  largeBody: boolean;
  log: { error(obj: object, msg: string): void };
}

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/**
 * Bodies up to this size are read and dropped when their request is refused before them, keeping the connection:
 * they are already in the socket's buffers, and closing it would make a client over its rate reconnect for every
 * call (a burst of honest calls then filled the per-address connection cap). Larger ones, and chunked ones, are
 * left unread and the connection closed: reading a MiB only to throw it away is the work admission saves.
 */
export const UNREAD_BODY_BYTES = 64 * 1024;

/**
 * The request-level stages that need no body (content type → network → authenticate → authorize → limit at
 * admission), run as the request arrives, before its body is read: a request without a valid key costs a hash and a
 * lookup, never a read of its body. Unknown keys are limited per client IP (docs/decisions.md §7),
 * counted only on failures: a valid key is never refused because its address is shared with someone guessing.
 */
export function admitter(deps: EndpointDeps) {
  const { networks, keys, limits, metrics, refusals, guard, config, usage } = deps;
  const refusalDelayMs = config.limits.refusalDelayMs;
  const bytesPerUnit = config.limits.bodyBytesPerUnit;
  const refuse = (refused: GatewayError, decision?: RateDecision): Refusal => ({ refused, decision, id: null });
  /** A known key's request refused here, counted in its usage with the refusal's code. */
  const count = (key: ResolvedKey, network: string, e: GatewayError, charge: boolean) => {
    // Not the socket's recheck every second (charge false): that is no request of the caller's.
    if (charge) usage?.refused(key.account.id, key.keyId, network, e.code);
  };

  /**
   * A key that does not resolve: an address that has spent its failures learns nothing more (429, whatever the key).
   * A key that exists but is refused (revoked, expired, suspended) has the refusal counted in its usage. `answer`:
   * what to answer instead of the key's own refusal (an unknown network's 404).
   */
  const unknownKey = (a: Arrival, err: unknown, network: string, charge: boolean, answer?: GatewayError): Refusal | Promise<Refusal> => {
    const e = answer ?? asGatewayError(err, a.log);
    if (err instanceof KnownKeyRefusal) count(err.known, network, e, charge);
    return err instanceof GatewayError && err.status === 401 ? failure(a, e) : refuse(e);
  };

  /** A failed authentication spends the address's failures; once they are spent, it is answered 429 instead of `e`. */
  const failure = (a: Arrival, e: GatewayError): Refusal | Promise<Refusal> => {
    const retryAfter = guard.failed(a.ip);
    // A promise when the failure was counted in Redis (cluster mode); never a promise for a valid key.
    if (retryAfter instanceof Promise) return retryAfter.then((r) => refuse(r === undefined ? e : guard.refusal(r)), () => refuse(e));
    return refuse(retryAfter === undefined ? e : guard.refusal(retryAfter));
  };

  /**
   * A network that does not exist: 404 whatever the key. With analytics on, the key is looked up (a cache hit for
   * a key in use) so that a known key's 404 is counted in its usage. A key decided at once (malformed,
   * or in memory) cost nothing; one the store was asked about and did not know spends the address's failures, as
   * on any network, so this path is no way round the unknown-key guard.
   */
  // The names a caller may use, said with every unknown one: a typo is fixed from the answer alone.
  const known = networks.list.map((n) => n.name).join(', ');
  const unknownNetwork = (a: Arrival, charge: boolean): Refusal | Promise<Refusal> => {
    const e = new GatewayError('UNKNOWN_NETWORK', { network: a.network.slice(0, 64), known });
    if (!usage || !charge) return refuse(e);
    const counted = (k: ResolvedKey) => { count(k, UNKNOWN_NETWORK, e, charge); return refuse(e); };
    let key: ResolvedKey | Promise<ResolvedKey>;
    try {
      key = keys.resolve(a.apikey);
    } catch (err) {
      if (err instanceof KnownKeyRefusal) count(err.known, UNKNOWN_NETWORK, e, charge);
      return refuse(e);
    }
    if (key instanceof Promise) return key.then(counted, (err) => unknownKey(a, err, UNKNOWN_NETWORK, charge, e));
    return counted(key);
  };

  /**
   * Authorize what applies to the whole request (docs/decisions.md §6), then the limit at admission. A key's JWT
   * verified before is decided at once; a new token once verified.
   */
  const authorized = (a: Arrival, network: Network, key: ResolvedKey, charge: boolean): Admission => {
    let jwt: void | Promise<void>;
    try {
      jwt = authorizeRequest(key, { ip: a.ip, origin: a.origin, network: network.name, headers: a.headers }, keys.jwts);
    } catch (err) {
      return unauthorized(a, network, key, err, charge);
    }
    if (jwt) return jwt.then(() => limited(a, network, key, charge), (err) => unauthorized(a, network, key, err, charge));
    return limited(a, network, key, charge);
  };

  /**
   * A known key's request refused by its own rules, counted in its usage. A JWT refused (401) spends the address's
   * failures as an unknown key does: tokens cannot be tried at speed either.
   */
  const unauthorized = (a: Arrival, network: Network, key: ResolvedKey, err: unknown, charge: boolean): Refusal | Promise<Refusal> => {
    const e = asGatewayError(err, a.log);
    count(key, network.name, e, charge);
    return e.status === 401 && charge ? failure(a, e) : refuse(e);
  };

  const limited = (a: Arrival, network: Network, key: ResolvedKey, charge: boolean): Admission => {
    // Stage limit, at admission: the key's bucket pays for reading its body before it is read, from the
    // declared length (a chunked body pays for its size once read). An empty bucket: 429, the body never read.
    if (!limits || !charge) return { network, key, credit: 0, ip: a.ip };
    // A body under limits.bodyBytesPerUnit, of declared length, costs no units to read: the whole request is
    // limited once, after it is framed (one bucket step a request, not two), and a refusal then answers
    // under the request's own id.
    if (!a.largeBody && a.declaredBytes < bytesPerUnit) return { network, key, credit: 0, ip: a.ip };
    const credit = deps.framingCost(Number.isFinite(a.declaredBytes) ? a.declaredBytes : 0);
    try {
      const d = limits.admitBody(key, credit);
      if (d instanceof Promise) return d.then((decision) => ({ network, key, credit, decision, ip: a.ip }), (err) => refusedAtAdmission(a, network, key, err));
      return { network, key, credit, decision: d, ip: a.ip };
    } catch (err) {
      return refusedAtAdmission(a, network, key, err);
    }
  };

  const refusedAtAdmission = async (a: Arrival, network: Network, key: ResolvedKey, err: unknown): Promise<Refusal> => {
    const e = asGatewayError(err, a.log);
    const decision = decisionOf(err);
    if (e.status === 429) {
      metrics?.refused(network.name);
      refusals?.refused(key.keyId, key.account.id, network.name);
      count(key, network.name, e, true);
      // A large body refused unread is held a little before the answer (at most limits.refusalDelayMs, never past
      // when a retry could pass): a key that keeps sending them into an empty bucket then costs a few refusals a
      // second per connection, not hundreds (each one a new connection, headers and a key lookup, which tripled
      // another tenant's p50). A small body's refusal keeps its connection and is answered at once.
      const wait = a.largeBody ? Math.min(refusalDelayMs, decision?.retryAfterMs ?? 0) : 0;
      if (wait > 0) await sleep(wait);
    }
    return refuse(e, decision);
  };

  /**
   * `charge: false`: the checks only, nothing spent (an open socket's key, checked again every second). Decided at
   * once when the key is in memory and the limiter in the process (the common case: no promise); else a promise.
   */
  return (a: Arrival, opts: { charge?: boolean } = {}): Admission => {
    // Stage content-type (docs/decisions.md §2: application/json with any charset, or absent).
    // The plain value every client library sends is compared as is; any other is tested (a regular expression costs
    // a thousand instructions a request).
    const type = a.contentType;
    if (type !== undefined && type !== 'application/json' && !JSON_TYPE.test(type)) return refuse(new GatewayError('UNSUPPORTED_MEDIA_TYPE', { type: type.slice(0, 64) }));
    // Stage network.
    const charge = opts.charge !== false;
    const network = networks.get(a.network);
    if (!network) return unknownNetwork(a, charge);
    // The first call since the network's last round of checks: an idle network checks its nodes first.
    if (!network.chain.asked && charge) {
      const woke = network.chain.wake();
      if (woke) return woke.then(() => authenticate(a, network, charge));
    }
    return authenticate(a, network, charge);
  };

  function authenticate(a: Arrival, network: Network, charge: boolean): Admitted | Refusal | Promise<Admitted | Refusal> {
    // Stage authenticate.
    let key: ResolvedKey | Promise<ResolvedKey>;
    try {
      key = keys.resolve(a.apikey);
    } catch (err) {
      return unknownKey(a, err, network.name, charge);
    }
    if (key instanceof Promise) return key.then((k) => authorized(a, network, k, charge), (err) => unknownKey(a, err, network.name, charge));
    return authorized(a, network, key, charge);
  }
}

/** Admission's outcome: at once when nothing had to be waited for, else a promise of it. */
export type Admission = Admitted | Refusal | Promise<Admitted | Refusal>;

/** A GatewayError as is; anything else is a bug: logged, and answered -32603. */
export function asGatewayError(err: unknown, log: Arrival['log']): GatewayError {
  if (err instanceof GatewayError) return err;
  log.error({ err }, 'unexpected error in the request pipeline');
  return new GatewayError('INTERNAL');
}
