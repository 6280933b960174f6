import type { RpcErrorObject } from '../errors/gateway-error.ts';

/**
 * What an upstream answers for one call: a result or a JSON-RPC error (passed through unchanged). `raw`, when
 * present, is the result's JSON text exactly as the node sent it: the answer goes out with it instead of
 * `JSON.stringify(result)` (rpc/respond.ts). An adapter that changes a result returns a new answer, without `raw`.
 */
export type UpstreamAnswer = { result: unknown; error?: undefined; raw?: string } | { error: RpcErrorObject; result?: undefined; raw?: undefined };

/** A node that answers JSON-RPC calls: a URL, or an embedded anvil. The pool of several comes later. */
export interface Upstream {
  /** For logs and the banner; credentials redacted. */
  readonly label: string;
  /**
   * Sends one call. Resolves with the node's answer, or rejects with a GatewayError
   * (UPSTREAM_UNAVAILABLE, UPSTREAM_TIMEOUT) when no answer could be had.
   */
  call(method: string, params: unknown[], timeoutMs: number): Promise<UpstreamAnswer>;
  close(): Promise<void>;
}
