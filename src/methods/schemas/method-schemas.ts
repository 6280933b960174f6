import { readFileSync } from 'node:fs';
import { BYTES, EIP1898, FILTER_ID, QUANTITY, TRACE_CONFIG } from './common.ts';
import { handWritten } from './hand-written.ts';
import type { MethodSchema, ParamSchema } from './method-schema.ts';

const vendored: Record<string, MethodSchema> = JSON.parse(
  readFileSync(new URL('./openrpc-methods.json', import.meta.url), 'utf8'),
).methods;

/** Call objects: clients send `data` (the spec's name) as often as `input`, and nodes ignore fields they do not know. */
function widenCallObject(p: ParamSchema): ParamSchema {
  const s = p.schema as { properties?: Record<string, unknown> };
  return { ...p, schema: { ...p.schema, additionalProperties: true, properties: { ...s.properties, data: BYTES } } };
}

/**
 * geth's eth_call and eth_estimateGas take a state override set and block overrides after the block; execution-apis
 * lists neither, so a client using them (viem's `stateOverride`, `blockOverrides`) got "too many arguments". Their
 * fields are the node's to check.
 */
const OVERRIDES: ParamSchema[] = [
  { name: 'State overrides', required: false, schema: { title: 'state override set', type: 'object' } },
  { name: 'Block overrides', required: false, schema: { title: 'block overrides', type: 'object' } },
];

/**
 * Patches applied to the vendored schemas, each for a stated reason; everything else is execution-apis verbatim.
 */
function patch(name: string, m: MethodSchema): MethodSchema {
  const params = m.params.map((p) => {
    if (p.name === 'Transaction' && (p.schema as { type?: string }).type === 'object') return widenCallObject(p);
    // docs/decisions.md §4: wherever a state block is named, an EIP-1898 object is accepted too.
    if (p.name === 'Block' && ((p.schema as any).anyOf || (p.schema as any).oneOf) && name !== 'debug_traceBlockByNumber') {
      return { ...p, schema: { title: p.schema.title, anyOf: [p.schema, EIP1898] } };
    }
    if (p.name === 'Filter identifier') return { ...p, schema: FILTER_ID };
    if (p.name === 'TraceConfig') return { ...p, schema: TRACE_CONFIG };
    return p;
  });
  return { ...m, params, result: patchResult(name, m.result) };
}

/** Result schemas that reject a legitimate node answer; only the tests read them (method-schema.ts). */
function patchResult(name: string, result: Record<string, unknown>): Record<string, unknown> {
  // Filter results are "hashes" or "logs", both arrays: an empty answer (nothing new) matches both, so oneOf refuses it.
  if ((name === 'eth_getFilterChanges' || name === 'eth_getFilterLogs' || name === 'eth_getLogs') && result.oneOf) {
    const { oneOf, ...rest } = result;
    return { ...rest, anyOf: oneOf };
  }
  // Receipts carry `blockTimestamp` (geth 1.16, anvil); execution-apis lists it on logs only and forbids extra fields.
  if (name === 'eth_getTransactionReceipt') {
    const variants = result.oneOf as Record<string, unknown>[];
    return {
      ...result,
      oneOf: variants.map((v) => (v.type === 'object'
        ? { ...v, properties: { ...(v.properties as object), blockTimestamp: QUANTITY } }
        : v)),
    };
  }
  return result;
}

function build(): Record<string, MethodSchema> {
  const out: Record<string, MethodSchema> = {};
  for (const [name, m] of Object.entries(vendored)) out[name] = patch(name, m);
  for (const [name, m] of Object.entries(handWritten)) out[name] = m;
  // debug_traceCall takes eth_call's call object and block.
  const call = out.eth_call.params;
  out.debug_traceCall = { ...out.debug_traceCall, params: [call[0], call[1], out.debug_traceCall.params[2]] };
  for (const name of ['eth_call', 'eth_estimateGas']) out[name] = { ...out[name], params: [...out[name].params, ...OVERRIDES] };
  return out;
}

/** Parameter and result schemas of every method Nodegate knows, by name. */
export const methodSchemas: Readonly<Record<string, MethodSchema>> = build();
