import { catalogue, type ErrorName } from './catalogue.ts';

/** The JSON-RPC error object as it goes on the wire. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * The one error class of the gateway: a row of the catalogue plus the details that fill its message and `data`.
 * Never put a secret (an API key) in `details`: they are sent to the caller.
 */
export class GatewayError extends Error {
  readonly name = 'GatewayError';
  readonly entry: ErrorName;
  readonly status: number;
  readonly code: number;
  readonly data: Record<string, unknown>;

  constructor(entry: ErrorName, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    const row = catalogue[entry];
    super(fill(row.message, details), options);
    this.entry = entry;
    this.status = row.status;
    this.code = row.code;
    this.data = { reason: row.reason, ...details };
  }

  toJSON(): RpcErrorObject {
    return { code: this.code, message: this.message, data: this.data };
  }
}

/** Fills `{name}` placeholders; a `detail` the template does not place is appended ("Invalid Request: empty batch"). */
function fill(template: string, details: Record<string, unknown>): string {
  let out = template.includes('{')
    ? template.replace(/\{(\w+)\}/g, (m, k: string) => (details[k] === undefined ? m : String(details[k])))
    : template;
  if (typeof details.detail === 'string' && !template.includes('{detail}')) out += `: ${details.detail}`;
  return out;
}
