import type { Adapter } from '../adapters/adapter.ts';
import { receiptAsGeth } from '../adapters/eth_getTransactionReceipt.ts';
import { BLOCK_NUMBER_OR_TAG, EIP1898, HASH32 } from '../schemas/common.ts';
import { methodSchemas } from '../schemas/method-schemas.ts';
import { READ, type DeclaredSpec } from '../method-spec.ts';

/** A receipt as eth_getTransactionReceipt describes it (its non-null variant). */
const receipt = (methodSchemas.eth_getTransactionReceipt.result.oneOf as Record<string, unknown>[]).find((v) => v.type === 'object');

/** Each receipt as eth_getTransactionReceipt gives it (anvil's numeric `blockTimestamp` as a QUANTITY). */
const adapter: Adapter = async (method, params, next) => {
  const answer = await next(method, params);
  if (!Array.isArray(answer.result)) return answer;
  return { result: answer.result.map(receiptAsGeth) };
};

/**
 * geth's eth_getBlockReceipts: every receipt of one block, in order; null for a block the node does not have.
 * ponder and Subsquid ask for it first and fall back to one eth_getTransactionReceipt per transaction. anvil 1.7.1
 * answers it, so embedded chains enable it by default; elsewhere an operator lists it in `rpc.extraMethods`.
 * Cost: ten receipts' worth (15 x 10). The node reads the whole block's receipts, more than one receipt, yet a
 * caller replacing one call per transaction (150 to 200 on a mainnet block) should pay less than those calls.
 */
export const ethGetBlockReceipts: DeclaredSpec = {
  ...READ,
  name: 'eth_getBlockReceipts',
  heavy: true,
  schema: {
    // geth's BlockNumberOrHash: a number or tag, a bare block hash, or an EIP-1898 object.
    params: [{ name: 'Block', required: true, schema: { title: 'Block number, tag or hash', anyOf: [BLOCK_NUMBER_OR_TAG, HASH32, EIP1898] } }],
    result: { anyOf: [{ type: 'null' }, { type: 'array', items: receipt }] },
  },
  block: { index: 0, by: 'numberOrHash' },
  holds: 'history',
  verify: 'receipts',
  cost: 15 * 10,
  cache: 'block',
  seen: 'items',
  adapter,
  extra: { embedded: true },
};
