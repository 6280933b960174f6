import { Ajv, type ValidateFunction } from 'ajv';
import { GatewayError } from '../errors/gateway-error.ts';
import type { MethodSchema } from './schemas/method-schema.ts';
import type { BlockParam } from './method-spec.ts';

const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });

/** Checks the positional params of one method; returns the error to answer, or undefined when they are fine. */
export type ParamValidator = (params: unknown[]) => GatewayError | undefined;

/**
 * Compiles a method's parameter schemas once, at start-up (STYLE 8). The validator also applies geth's rule
 * that a missing trailing block parameter means `latest` (docs/decisions.md §4), so upstreams that insist on it
 * (anvil) answer like geth: where the method's spec says its block is optional (`block`), or, for a schema no
 * spec describes (an operator's extra method), where the schema's optional `Block` comes last.
 */
export function compileParamValidator(schema: MethodSchema, block: BlockParam | undefined = optionalBlockOf(schema)): ParamValidator {
  const params = schema.params;
  const checks: ValidateFunction[] = params.map((p) => ajv.compile(p.schema));
  const required = params.reduce((n, p, i) => (p.required ? i + 1 : n), 0);
  const defaultsLatest = block?.by === 'number' && block.optional;
  const blockAt = block?.index ?? -1;
  const max = params.length;

  return (values) => {
    if (values.length > max) {
      return new GatewayError('INVALID_PARAMS', { detail: `too many arguments, want at most ${max}`, expected: params.map((p) => p.name) });
    }
    for (let i = 0; i < max; i++) {
      const v = values[i];
      if (v === undefined || (v === null && !params[i].required)) {
        if (i < required) {
          return new GatewayError('INVALID_PARAMS', { detail: `missing value for required argument ${i}`, param: params[i].name, index: i });
        }
        continue;
      }
      if (!checks[i](v)) {
        const e = checks[i].errors?.[0];
        const at = e?.instancePath ? ` at ${e.instancePath}` : '';
        // ajv's enum wording names no value: the allowed ones are said, so the caller can pick one.
        const allowed = e?.keyword === 'enum' ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.map((x) => JSON.stringify(x)).join(', ')})` : '';
        return new GatewayError('INVALID_PARAMS', {
          detail: `invalid argument ${i} (${params[i].name})${at}: ${e?.message ?? 'invalid'}${allowed}`,
          param: params[i].name,
          index: i,
          expected: params[i].schema.title ?? params[i].name,
        });
      }
      // Open-ended objects (state overrides, unknown call fields) take any value: one nested 10,000 deep passed the
      // schema, then overflowed the stack of JSON.stringify on its way to the node (500, found by test/e2e/fuzz).
      // No node would take it either: serde_json (anvil, reth) stops at 128 levels.
      if (typeof v === 'object' && deeperThan(v as object, MAX_DEPTH)) return tooDeep(i, params[i].name, params[i].schema.title ?? params[i].name);
    }
    if (defaultsLatest && (values.length === blockAt || values[blockAt] === null)) values[blockAt] = 'latest';
    return undefined;
  };
}

/** The block a schema leaves optional: the last parameter, or followed only by optional overrides (eth_call's). */
export function optionalBlockOf(schema: MethodSchema): BlockParam | undefined {
  const params = schema.params;
  let at = params.length - 1;
  while (at > 0 && !params[at].required && params[at].name.endsWith(' overrides')) at--;
  return at >= 0 && params[at].name === 'Block' && !params[at].required ? { index: at, by: 'number', optional: true } : undefined;
}

/**
 * For operator-added methods that no schema describes (`rpc.extraMethods`): any params, except those nested
 * too deep to be forwarded (see above).
 */
export const anyParams: ParamValidator = (values) => {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== null && typeof v === 'object' && deeperThan(v, MAX_DEPTH)) return tooDeep(i, `argument ${i}`, 'any JSON value');
  }
  return undefined;
};

/** Deepest nesting of arrays and objects a parameter may have. */
const MAX_DEPTH = 128;

function tooDeep(index: number, param: string, expected: unknown): GatewayError {
  return new GatewayError('INVALID_PARAMS', { detail: `argument ${index} (${param}) is nested deeper than ${MAX_DEPTH} levels`, param, index, expected });
}

/** Whether a parsed JSON value nests arrays/objects deeper than `max`; iterative, so depth cannot overflow the stack. */
function deeperThan(root: object, max: number): boolean {
  const values: object[] = [root];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop()!;
    const d = depths.pop()!;
    if (d > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const c of children) {
      if (c !== null && typeof c === 'object') { values.push(c); depths.push(d + 1); }
    }
  }
  return false;
}
