import type { Adapter } from './adapter.ts';

/**
 * anvil adds `blockTimestamp` to receipts as a JSON number; geth (since 1.16.1, go-ethereum issue 32120) and
 * the logs in the same receipt give it as a QUANTITY. Only a numeric one is rewritten.
 */
export const eth_getTransactionReceipt: Adapter = async (method, params, next) => {
  const answer = await next(method, params);
  const r = answer.result as { blockTimestamp?: unknown } | null | undefined;
  if (!r || typeof r !== 'object' || typeof r.blockTimestamp !== 'number') return answer;
  return { result: { ...r, blockTimestamp: '0x' + r.blockTimestamp.toString(16) } };
};
