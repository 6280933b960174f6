import type { Adapter } from './adapter.ts';

/**
 * anvil adds `blockTimestamp` to receipts as a JSON number; geth (since 1.16.1, ethereum/go-ethereum#32120) and
 * the logs in the same receipt give it as a QUANTITY. Only a numeric one is rewritten.
 */
export const eth_getTransactionReceipt: Adapter = async (method, params, next) => {
  const answer = await next(method, params);
  const result = receiptAsGeth(answer.result);
  return result === answer.result ? answer : { result };
};

/** A receipt with a numeric `blockTimestamp` made a QUANTITY; anything else as it is (eth_getBlockReceipts too). */
export function receiptAsGeth(receipt: unknown): unknown {
  const r = receipt as { blockTimestamp?: unknown } | null | undefined;
  if (!r || typeof r !== 'object' || typeof r.blockTimestamp !== 'number') return receipt;
  return { ...r, blockTimestamp: '0x' + r.blockTimestamp.toString(16) };
}
