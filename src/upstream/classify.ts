import { GatewayError, type RpcErrorObject } from '../errors/gateway-error.ts';
import { logsRefusal, type LogsRefusal } from './size-refusals.ts';
import { NodeHttpError, type UpstreamAnswer } from './upstream.ts';

/**
 * Every way an upstream call can end, decided here once (as viem's `shouldRetry`/`shouldThrow` in
 * `utils/buildRequest.ts`): whether another upstream may be asked instead, and what it says of the node for its
 * breaker. The pool acts on it (chain/upstream-pool.ts); the table is drawn in docs/architecture.md.
 */
export type OutcomeKind =
  | 'result' // an answer for the caller
  | 'caller-error' // a JSON-RPC error that is the caller's answer (a revert, invalid params): the same anywhere
  | 'not-supported' // the node lacks the method (an adapter may answer instead): the node is up
  | 'too-wide' // an eth_getLogs range or answer over the node's bound: the caller's answer, unless the query is split
  | 'capacity' // the node's JSON-RPC "not now" (-32005 / 429 in the body): another node may answer
  | 'missing-data' // the node lacks the block or state (pruned, not synced yet): another node may have it
  | 'http-status' // HTTP 429 / 502 / 503 / 504 instead of JSON-RPC: a Retry-After is kept as a rest
  | 'timeout' // no answer within the call's time-out
  | 'transport' // no answer at all (refused, reset, not JSON-RPC)
  | 'gateway' // the gateway's own refusal of the answer (too large, budget busy): never the node's fault
  | 'unverified'; // a result that failed the network's verification (chain/verify/): wrong, asked elsewhere, never passed on

/** What an outcome means for the node's circuit breaker: it answered, it did not, or it says nothing of its health. */
export type BreakerVerdict = 'success' | 'failure' | 'neutral';

export interface Outcome {
  kind: OutcomeKind;
  /** Another upstream of the network may be asked instead (reads only; the pool decides which calls are reads). */
  retry: boolean;
  breaker: BreakerVerdict;
  /** How long the node asked to be left alone, ms (HTTP Retry-After, or a capacity error's own hint). */
  restMs?: number;
  /** `too-wide`: what the node refused (its range, or its results) and the bound it named, if any (size-refusals.ts). */
  refusal?: LogsRefusal;
}

/** A node over its quota with no Retry-After: left alone this long before it is asked again. */
export const DEFAULT_REST_MS = 1000;

const RESULT: Outcome = { kind: 'result', retry: false, breaker: 'success' };
const CALLER: Outcome = { kind: 'caller-error', retry: false, breaker: 'success' };
const NOT_SUPPORTED: Outcome = { kind: 'not-supported', retry: false, breaker: 'success' };
const MISSING: Outcome = { kind: 'missing-data', retry: true, breaker: 'neutral' };
const TIMEOUT: Outcome = { kind: 'timeout', retry: true, breaker: 'failure' };
const TRANSPORT: Outcome = { kind: 'transport', retry: true, breaker: 'failure' };
const GATEWAY: Outcome = { kind: 'gateway', retry: false, breaker: 'neutral' };
/** A result that failed verification: a wrong answer counts against the node as no answer does. */
export const UNVERIFIED: Outcome = { kind: 'unverified', retry: true, breaker: 'failure' };

/**
 * A node that does not have what was asked, in the words of geth ("header not found", "missing trie node",
 * "required historical state unavailable", "pruned history unavailable" with EIP-4444's code 4444, "transaction
 * indexing is in progress"), erigon/reth ("unknown block", "block not found", "state at block #N is pruned") and
 * Nethermind ("... is not available", "pruned"), and providers' ("state histories haven't been fully indexed yet"):
 * a node behind, or pruned, not a wrong request. The pool sends such a call to a node that holds the block, and
 * never passes these words on (chain/retried-read.ts, BLOCK_NOT_HELD when none does).
 */
const MISSING_DATA = /header not found|missing trie node|unknown block|block not found|required historical state unavailable|historical state .*not available|state (is )?not available|pruned|state histor(y|ies) .*(not|n't) (yet |been )?(fully )?(available|indexed)|transaction indexing is in progress/i;

/** A block above the node's own head, in anvil's words (with invalid-params' code, so told before that). */
const BEYOND_HEAD = /BlockOutOfRangeError|block height is \d+ but requested was \d+/;

/** Capacity said in words by nodes and providers that use another code (-32000, -32603). */
const CAPACITY_WORDS = /rate limit|too many requests|capacity exceeded|exceeded .*(quota|capacity|compute units)|request limit reached/i;

/** A revert's message: its reason is the contract's words, whatever they say. */
const REVERTED = /execution reverted|VM Exception while processing transaction/i;

/** A "method not supported" said with a code that means something else too (ganache -32700 / -32000, others -32603). */
const NOT_SUPPORTED_WORDS = /\bmethod\b.*(not (supported|found|implemented|available)|does not exist|unsupported)|not supported.*\bmethod\b|unsupported method/i;

/**
 * The node lacks the method, as each implementation says it: anvil, geth and reth -32601; Hardhat/EDR -32004
 * (EIP-1474 "method not supported"); ganache -32700 or -32000 with "Method … not supported" in the message. A
 * revert (code 3, or "execution reverted: …") never counts, whatever its reason says.
 */
export function notSupported(error: RpcErrorObject | undefined): boolean {
  if (!error) return false;
  if (error.code === -32601 || error.code === -32004) return true;
  if (error.code !== -32700 && error.code !== -32000 && error.code !== -32603) return false;
  const message = String(error.message ?? '');
  return !REVERTED.test(message) && NOT_SUPPORTED_WORDS.test(message);
}

/** An answer the node gave (a result or a JSON-RPC error). */
export function classifyAnswer(answer: UpstreamAnswer): Outcome {
  const error = answer.error;
  if (error === undefined) return RESULT;
  if (notSupported(error)) return NOT_SUPPORTED;
  const message = String(error.message ?? '');
  // An eth_getLogs range or answer over the node's bound, whatever the code (-32005, -32000, -32602, -32614): not
  // its capacity, and not to be asked of another node as it is; the pool splits the query (chain/logs-split.ts).
  const refusal = logsRefusal(error);
  if (refusal) return { kind: 'too-wide', retry: false, breaker: 'success', refusal };
  if (error.code === -32005 || error.code === 429) {
    return { kind: 'capacity', retry: true, breaker: 'failure', restMs: restHint(error.data) ?? DEFAULT_REST_MS };
  }
  // anvil's "BlockOutOfRangeError: block height is 99 but requested was 711" comes as -32602: a node behind (or,
  // with --prune-history, one that no longer holds an old block's state); EIP-4444's code for expired history.
  if (BEYOND_HEAD.test(message) || error.code === 4444) return MISSING;
  // A revert (whatever its reason says) and invalid params: the same on every node.
  if (error.code === 3 || error.code === -32602 || REVERTED.test(message)) return CALLER;
  if (MISSING_DATA.test(message)) return MISSING;
  if (CAPACITY_WORDS.test(message)) return { kind: 'capacity', retry: true, breaker: 'failure', restMs: restHint(error.data) ?? DEFAULT_REST_MS };
  return CALLER;
}

/** A call that ended without an answer: an error from the upstream client. */
export function classifyFailure(err: unknown): Outcome {
  if (err instanceof NodeHttpError) {
    const restMs = err.retryAfterMs ?? (err.httpStatus === 429 ? DEFAULT_REST_MS : undefined);
    return { kind: 'http-status', retry: true, breaker: 'failure', ...(restMs === undefined ? {} : { restMs }) };
  }
  if (err instanceof GatewayError) {
    if (err.entry === 'UPSTREAM_TIMEOUT') return TIMEOUT;
    if (err.entry === 'UPSTREAM_UNAVAILABLE') return TRANSPORT;
  }
  return GATEWAY;
}

/**
 * An upstream client's transport error as the gateway's: a node's "not now" status kept as it is (its Retry-After
 * is needed), too slow is 504 (-32015), anything else (refused, reset, closed) is 503 (-32002).
 */
export function transportError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  // undici's time-outs by their documented codes: no import of undici here, which every importer of this module
  // (the method adapters, so the CLI) would otherwise load (~25 ms of each command).
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new GatewayError('UPSTREAM_TIMEOUT', {}, { cause: err });
  }
  return new GatewayError('UPSTREAM_UNAVAILABLE', {}, { cause: err });
}

/**
 * A node's error as the caller may see it: code, message and data, without the node's internals. ganache puts a
 * `stack` of its server's file paths in `data` (and some nodes on the error itself); such members are dropped,
 * everything else (a revert's data, a reason) passes. The same object comes back when there is nothing to drop.
 */
export function forCaller(error: RpcErrorObject): RpcErrorObject {
  const top = Object.keys(error).some((k) => k !== 'code' && k !== 'message' && k !== 'data');
  const data = withoutInternals(error.data, 3);
  if (!top && data === error.data) return error;
  return data === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data };
}

/** Internals a node's error data may carry: a stack trace (file paths of the node's server). */
const INTERNAL_KEYS = new Set(['stack', 'stackTrace']);

/** `value` without INTERNAL_KEYS members in its objects, `depth` levels down; the same value when none is found. */
function withoutInternals(value: unknown, depth: number): unknown {
  if (depth === 0 || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const kept = INTERNAL_KEYS.has(k) ? undefined : withoutInternals(v, depth - 1);
    if (kept !== v && !out) out = { ...(value as Record<string, unknown>) };
    if (out) {
      if (INTERNAL_KEYS.has(k)) delete out[k];
      else out[k] = kept;
    }
  }
  return out ?? value;
}

/** A capacity error's own hint of when to come back (Infura: data.rate.backoff_seconds; others: data.retryAfter s). */
function restHint(data: unknown): number | undefined {
  const d = data as { rate?: { backoff_seconds?: unknown }; retryAfter?: unknown; backoff_seconds?: unknown } | undefined;
  const s = d?.rate?.backoff_seconds ?? d?.backoff_seconds ?? d?.retryAfter;
  return typeof s === 'number' && Number.isFinite(s) && s >= 0 ? Math.min(s, 3600) * 1000 : undefined;
}
