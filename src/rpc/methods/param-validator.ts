import { Ajv, type ValidateFunction } from 'ajv';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { MethodSchema } from '../schemas/method-schema.ts';

const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });

/** Checks the positional params of one method; returns the error to answer, or undefined when they are fine. */
export type ParamValidator = (params: unknown[]) => GatewayError | undefined;

/**
 * Compiles a method's parameter schemas once, at start-up (STYLE 8). The validator also applies geth's rule
 * that a missing trailing block parameter means `latest` (DECISIONS 4), so upstreams that insist on it
 * (anvil) answer like geth.
 */
export function compileParamValidator(schema: MethodSchema): ParamValidator {
  const params = schema.params;
  const checks: ValidateFunction[] = params.map((p) => ajv.compile(p.schema));
  const required = params.reduce((n, p, i) => (p.required ? i + 1 : n), 0);
  // The block is the last parameter, or followed only by optional overrides (eth_call's state and block overrides).
  let blockAt = params.length - 1;
  while (blockAt > 0 && !params[blockAt].required && params[blockAt].name.endsWith(' overrides')) blockAt--;
  const defaultsLatest = blockAt >= 0 && params[blockAt].name === 'Block' && !params[blockAt].required;
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
        return new GatewayError('INVALID_PARAMS', {
          detail: `invalid argument ${i} (${params[i].name})${at}: ${e?.message ?? 'invalid'}`,
          param: params[i].name,
          index: i,
          expected: params[i].schema.title ?? params[i].name,
        });
      }
    }
    if (defaultsLatest && (values.length === blockAt || values[blockAt] === null)) values[blockAt] = 'latest';
    return undefined;
  };
}
