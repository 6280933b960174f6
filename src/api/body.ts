import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.ts';

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/**
 * How the management API reads bodies. The server reads every body raw for the JSON-RPC endpoint; inside the API
 * context only JSON is accepted (malformed: 400 `bad_request`, other types: 415). Bodies are checked by an Ajv of
 * our own rather than fastify's default: fastify's silently drops unknown fields and coerces types, where a
 * management API should say which field is wrong (`validation_failed` naming it). Validators compile at start-up.
 */
export function useJsonBodies(api: FastifyInstance, sharedSchemas: readonly object[]): void {
  api.removeAllContentTypeParsers();
  api.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new ApiError(400, 'bad_request', 'the body is not valid JSON'), undefined);
    }
  });

  const ajv = new Ajv({ allErrors: false, coerceTypes: false, removeAdditional: false, useDefaults: true, strict: false });
  addFormats(ajv);
  for (const s of sharedSchemas) ajv.addSchema(s);
  api.setValidatorCompiler(({ schema, httpPart }) => {
    const validate = ajv.compile(schema);
    // `{ value }` / `{ error }` is fastify's custom-validator result: the checked value (defaults applied) replaces
    // the request part. A POST without a body (revoke, suspend) is an empty object as far as the schema goes.
    return (data: unknown) => {
      const value = httpPart === 'body' && data == null ? {} : data;
      return validate(value) ? { value } : { error: validate.errors as unknown as Error };
    };
  });
}
