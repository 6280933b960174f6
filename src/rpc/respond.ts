import type { RpcErrorObject } from '../errors/gateway-error.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import type { RpcId } from './framing.ts';

/** Serialises one response object; the id is echoed with its type kept (docs/decisions.md §3). */
export function responseJson(id: RpcId, answer: UpstreamAnswer): string {
  const idJson = typeof id === 'number' ? String(id) : typeof id === 'string' ? JSON.stringify(id) : id === null ? 'null' : id.json;
  if (answer.error !== undefined) return `{"jsonrpc":"2.0","id":${idJson},"error":${JSON.stringify(errorObject(answer.error))}}`;
  const result = answer.raw ?? (answer.result === undefined ? 'null' : JSON.stringify(answer.result));
  return `{"jsonrpc":"2.0","id":${idJson},"result":${result}}`;
}

function errorObject(e: RpcErrorObject | { toJSON(): RpcErrorObject }): RpcErrorObject {
  return 'toJSON' in e && typeof e.toJSON === 'function' ? e.toJSON() : (e as RpcErrorObject);
}
