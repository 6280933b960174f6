import { BLOCK_NUMBER_OR_TAG, BYTES, HASH32, QUANTITY, TRACE_CONFIG } from './common.ts';
import type { MethodSchema } from './method-schema.ts';

const none: MethodSchema['params'] = [];
const block = { title: 'block object', type: ['object', 'null'] };

/** Methods of the allowed list that the execution-apis OpenRPC document does not describe (geth's docs do). */
export const handWritten: Record<string, MethodSchema> = {
  web3_clientVersion: { params: none, result: { type: 'string' } },
  web3_sha3: { params: [{ name: 'data', required: true, schema: BYTES }], result: HASH32 },
  net_listening: { params: none, result: { type: 'boolean' } },
  net_peerCount: { params: none, result: QUANTITY },
  eth_protocolVersion: { params: none, result: QUANTITY },
  eth_mining: { params: none, result: { type: 'boolean' } },
  eth_hashrate: { params: none, result: QUANTITY },
  eth_getUncleCountByBlockHash: { params: [{ name: 'Block hash', required: true, schema: HASH32 }], result: { anyOf: [QUANTITY, { type: 'null' }] } },
  eth_getUncleCountByBlockNumber: { params: [{ name: 'Block', required: true, schema: BLOCK_NUMBER_OR_TAG }], result: { anyOf: [QUANTITY, { type: 'null' }] } },
  eth_getUncleByBlockHashAndIndex: {
    params: [{ name: 'Block hash', required: true, schema: HASH32 }, { name: 'Uncle index', required: true, schema: QUANTITY }],
    result: block,
  },
  eth_getUncleByBlockNumberAndIndex: {
    params: [{ name: 'Block', required: true, schema: BLOCK_NUMBER_OR_TAG }, { name: 'Uncle index', required: true, schema: QUANTITY }],
    result: block,
  },
  eth_pendingTransactions: { params: none, result: { type: 'array', items: { type: 'object' } } },
  // The call object and block of eth_call, then geth's trace config with state and block overrides.
  debug_traceCall: {
    params: [
      { name: 'Transaction', required: true, schema: { type: 'object' } },
      { name: 'Block', required: false, schema: BLOCK_NUMBER_OR_TAG },
      { name: 'TraceConfig', required: false, schema: TRACE_CONFIG },
    ],
    result: { type: 'object' },
  },
};
