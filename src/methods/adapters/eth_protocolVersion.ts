import type { Adapter } from './adapter.ts';

/** anvil answers a JSON number; the method's result is a QUANTITY (geth answered "0x41"). */
export const eth_protocolVersion: Adapter = async (method, params, next) => {
  const answer = await next(method, params);
  return typeof answer.result === 'number' ? { result: '0x' + answer.result.toString(16) } : answer;
};
