import { GatewayError } from '../../errors/gateway-error.ts';
import type { Adapter } from './adapter.ts';

/**
 * anvil traces an unknown transaction as an empty success (`gas: 0, structLogs: []`) where geth answers
 * -32000 "transaction not found". Only an empty-looking trace costs the extra lookup.
 */
export const debug_traceTransaction: Adapter = async (method, params, next) => {
  const answer = await next(method, params);
  if (answer.error || !looksEmpty(answer.result)) return answer;
  const tx = await next('eth_getTransactionByHash', [params[0]]);
  if (tx.result === null) return { error: new GatewayError('TRANSACTION_NOT_FOUND').toJSON() };
  return answer;
};

function looksEmpty(r: unknown): boolean {
  if (r === null || r === undefined) return true;
  if (typeof r !== 'object') return false;
  const t = r as { gas?: unknown; structLogs?: unknown[]; type?: string; calls?: unknown };
  if (Array.isArray(t.structLogs)) return t.gas === 0 && t.structLogs.length === 0;
  return false;
}
