/**
 * Schemas written the way execution-apis writes them, for the methods its OpenRPC document lacks and for the
 * places where Nodegate accepts more than it does (docs/decisions.md §4: EIP-1898 block objects, `data` in call objects).
 */
export const QUANTITY = { title: 'hex encoded unsigned integer', type: 'string', pattern: '^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$' };
export const BYTES = { title: 'hex encoded bytes', type: 'string', pattern: '^0x([0-9a-fA-F]{2})*$' };
export const HASH32 = { title: '32 byte hex value', type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' };
export const ADDRESS = { title: 'hex encoded address', type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' };
export const BLOCK_TAG = { title: 'Block tag', type: 'string', enum: ['earliest', 'finalized', 'safe', 'latest', 'pending'] };
export const BLOCK_NUMBER_OR_TAG = { title: 'Block number or tag', anyOf: [QUANTITY, BLOCK_TAG] };

/** EIP-1898: `{blockHash, requireCanonical?}` or `{blockNumber}` wherever a block is named. */
export const EIP1898 = {
  title: 'EIP-1898 block object',
  oneOf: [
    { type: 'object', required: ['blockHash'], properties: { blockHash: HASH32, requireCanonical: { type: 'boolean' } }, additionalProperties: false },
    { type: 'object', required: ['blockNumber'], properties: { blockNumber: { anyOf: [QUANTITY, BLOCK_TAG] } }, additionalProperties: false },
  ],
};

/** Filter ids are opaque: nodes (and later the gateway) mint them with leading zeros, so any hex is accepted. */
export const FILTER_ID = { title: 'filter identifier', type: 'string', pattern: '^0x[0-9a-fA-F]{1,64}$' };

/**
 * geth's trace options (TraceConfig, TraceCallConfig), and nothing else: an unknown option would be ignored by the
 * node yet make a distinct cache key, and a tracer outside geth's built-in set (JavaScript tracer code) runs
 * arbitrary work on the shared node. `timeout` is a Go duration, as geth takes it.
 */
export const TRACE_CONFIG = {
  title: 'Trace configuration',
  type: 'object',
  additionalProperties: false,
  properties: {
    tracer: { enum: ['callTracer', 'prestateTracer', '4byteTracer', 'noopTracer', 'flatCallTracer'] },
    tracerConfig: {
      type: 'object',
      additionalProperties: false,
      properties: {
        onlyTopCall: { type: 'boolean' },
        withLog: { type: 'boolean' },
        diffMode: { type: 'boolean' },
        disableCode: { type: 'boolean' },
        disableStorage: { type: 'boolean' },
        convertParityErrors: { type: 'boolean' },
        includePrecompiles: { type: 'boolean' },
      },
    },
    timeout: { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m)$' },
    reexec: { type: 'integer', minimum: 0 },
    disableStack: { type: 'boolean' },
    disableStorage: { type: 'boolean' },
    enableMemory: { type: 'boolean' },
    enableReturnData: { type: 'boolean' },
    debug: { type: 'boolean' },
    limit: { type: 'integer', minimum: 0 },
    stateOverrides: { type: 'object' },
    blockOverrides: { type: 'object' },
  },
};
