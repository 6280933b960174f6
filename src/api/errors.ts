import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError, TooManyError, ValidationError } from '../accounts/errors.ts';
import { StoreConflictError } from '../store/store-errors.ts';
import { catalogue } from '../errors/catalogue.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { driverCause, writeFaultError, writeFaultOf } from '../store/write-fault.ts';

/** The `error.code` values of the management API (docs/api.md lists when each happens). */
export type ApiErrorCode = 'validation_failed' | 'not_found' | 'conflict' | 'unauthorized' | 'forbidden' | 'bad_request' | 'too_many_requests' | 'internal'
  | StoreFaultCode;
/** The catalogue's reasons of a store that cannot write (errors/catalogue.ts: STORE_FULL, STORE_READ_ONLY, STORE_IO_ERROR, STORE_UNREACHABLE). */
type StoreFaultCode = 'store_full' | 'store_read_only' | 'store_io_error' | 'store_unreachable';

/**
 * An error of the management API: HTTP status, stable code, message, and for validation the field. The REST API
 * has its own small shape, `{ error: { code, message, field? } }`; the JSON-RPC catalogue is for the endpoint.
 */
export class ApiError extends Error {
  readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

interface AjvError { keyword: string; instancePath: string; message?: string; params: Record<string, unknown> }

/** Turns whatever a route or hook threw into an ApiError: the service's errors, fastify's, or an unexpected one. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof ValidationError) return new ApiError(400, 'validation_failed', err.message, err.field);
  if (err instanceof NotFoundError) return new ApiError(404, 'not_found', err.message);
  if (err instanceof StoreConflictError) return new ApiError(409, 'conflict', err.message);
  if (err instanceof TooManyError) return new ApiError(429, 'too_many_requests', err.message, undefined, { 'retry-after': String(err.retryAfterSeconds) });
  // The caller's key could not be checked: the store is down and the key was not seen before it went.
  if (err instanceof GatewayError && err.entry === 'STORE_UNAVAILABLE') return new ApiError(503, 'store_unreachable', catalogue.STORE_UNREACHABLE.message);
  const fault = writeFaultError(err);
  if (fault) return new ApiError(fault.status, fault.data.reason as StoreFaultCode, fault.message);
  const e = err as FastifyError & { validation?: AjvError[] };
  if (Array.isArray(e.validation) && e.validation.length > 0) return fromSchemaError(e.validation[0], e.validationContext ?? 'body');
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError(413, 'bad_request', 'request body too large');
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError(415, 'bad_request', 'the body must be JSON (Content-Type: application/json)');
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return new ApiError(e.statusCode, 'bad_request', 'malformed HTTP request');
  return new ApiError(500, 'internal', 'internal error');
}

/** The first schema failure, as `field: what is wrong`; the field is a path into the body (`ipAllowlist[0]`). */
function fromSchemaError(v: AjvError, context: string): ApiError {
  const path = v.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let child: string | undefined;
  let message = v.message ?? 'is invalid';
  if (v.keyword === 'required') [child, message] = [String(v.params.missingProperty), 'is required'];
  else if (v.keyword === 'additionalProperties') [child, message] = [String(v.params.additionalProperty), 'is not a known field'];
  else if (v.keyword === 'enum') message = `must be one of ${(v.params.allowedValues as unknown[]).join(', ')}`;
  if (child !== undefined) path.push(child);
  const field = path.length === 0 ? context : path.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
  return new ApiError(400, 'validation_failed', `${field}: ${message}`, field);
}

/**
 * The API's error handler: one JSON shape, the status of the error, never a credential in the message. A store that
 * cannot write, or whose connection was lost, is the operator's to mend, not a bug: its line names the store
 * (`store`: the SQLite file's path, or the database) and the driver's cause, which the answer leaves out.
 */
export function apiErrorHandler(store: string) {
  return (err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const e = toApiError(err);
    const fault = writeFaultOf(err);
    if (!fault && e.code === 'store_unreachable') req.log.error({ store, fault: 'unreachable' }, `the store could not be reached to check the caller's key: ${store}; answered 503`);
    else if (fault === 'unreachable') req.log.error({ store, fault, cause: driverCause(err) }, `the connection to the store was lost: ${store}: ${driverCause(err)}; answered 503`);
    else if (fault) req.log.error({ store, fault, cause: driverCause(err) }, `the store cannot write (${fault}): ${store}: ${driverCause(err)}; the change was refused with 503`);
    else if (e.status >= 500) req.log.error({ err }, 'unhandled error in the management API');
    return sendApiError(reply, e);
  };
}

export function sendApiError(reply: FastifyReply, e: ApiError) {
  reply.headers(e.headers);
  return reply.code(e.status).send({ error: { code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) } });
}
