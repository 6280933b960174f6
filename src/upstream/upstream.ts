import type { CallSignal } from '../errors/on-abort.ts';
import { GatewayError, type RpcErrorObject } from '../errors/gateway-error.ts';

/**
 * What an upstream answers for one call: a result or a JSON-RPC error (passed through unchanged). `raw`, when
 * present, is the result's JSON text exactly as the node sent it: the answer goes out with it instead of
 * `JSON.stringify(result)` (rpc/respond.ts). An adapter that changes a result returns a new answer, without `raw`.
 */
export type UpstreamAnswer = { result: unknown; error?: undefined; raw?: string } | { error: RpcErrorObject; result?: undefined; raw?: undefined };

/** How a call may be sent. */
export interface CallOptions {
  /** The call's deadline: once it aborts, its node request is aborted (when no other call shares it). */
  signal?: CallSignal;
  /**
   * A light read (answered by a node in microseconds: a balance, a nonce, the block number): alone in its tick (a
   * single request's call), it may share one node request with other callers' light reads made in the same turn of
   * the event loop (upstream/http-upstream.ts). Any other call shares a node request only with the calls made in its
   * own tick (its client's batch).
   */
  light?: boolean;
  /**
   * A call that runs code on the node (eth_call, eth_estimateGas): it may go over the node's WebSocket like a light
   * read (upstream/ws-lane.ts), one frame each way instead of an HTTP request, but is never shared with other
   * callers' calls (its time is its own). Not traces: their answers are the size the HTTP path cuts off as it streams.
   */
  socket?: boolean;
  /** A trace (`debug_*`): it must not hold a read's answer back, so it shares a node request only with its like. */
  trace?: boolean;
  /**
   * A transaction sent (`raw`: signed by the caller; `signed`: signed by the node): an embedded chain journals it
   * before its anvil sees it (upstream/embedded/anvil-supervisor.ts).
   */
  write?: 'raw' | 'signed';
}

/** A node that answers JSON-RPC calls: a URL, or an embedded anvil. The chain module pools several (chain/upstream-pool.ts). */
export interface Upstream {
  /** For logs and the banner; credentials redacted. */
  readonly label: string;
  /**
   * Sends one call. Resolves with the node's answer, or rejects with a GatewayError
   * (UPSTREAM_UNAVAILABLE, UPSTREAM_TIMEOUT) when no answer could be had. When `signal` aborts, the node
   * request is aborted and the call rejects with the signal's reason (errors/call-aborted.ts).
   */
  call(method: string, params: unknown[], timeoutMs: number, opts?: CallOptions): Promise<UpstreamAnswer>;
  /**
   * Told when the node closed the last open connection to it: the node behind its address may come back as another
   * (the chain module reads its chain id again before it takes calls). Absent: it cannot tell (an embedded chain).
   */
  onDropped?: () => void;
  /**
   * Hands `listener` each new head the node pushes (its `eth_subscribe('newHeads')` over its WebSocket, made again
   * whenever the socket opens again), until the returned function is called. Undefined: it has no socket to push on.
   */
  followHeads?(listener: (header: unknown) => void): (() => void) | undefined;
  /** Whether its WebSocket for light reads is open (upstream/ws-lane.ts); undefined when it has none. For `/readyz`. */
  socketState?(): 'open' | 'down' | undefined;
  close(): Promise<void>;
}

/**
 * A node that answered with an HTTP status saying "not now" (429, 502, 503, 504) rather than a JSON-RPC answer:
 * 503 to a caller like any unavailable node, but retried on another upstream, and a 429's Retry-After kept so
 * that the node is left alone that long.
 */
export class NodeHttpError extends GatewayError {
  constructor(readonly httpStatus: number, readonly retryAfterMs: number | undefined) {
    super('UPSTREAM_UNAVAILABLE', { detail: `the node answered HTTP ${httpStatus}` });
  }
}

/** Retry-After as ms: delta seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const s = Number(value);
  if (Number.isFinite(s) && s >= 0) return Math.min(s, 3600) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.min(at - now, 3_600_000));
}
