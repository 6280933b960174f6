import type { RpcErrorObject } from '../errors/gateway-error.ts';

/** What an upstream answers for one call: a result or a JSON-RPC error (passed through unchanged). */
export type UpstreamAnswer = { result: unknown; error?: undefined } | { error: RpcErrorObject; result?: undefined };

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
