import { GatewayError } from '../errors/gateway-error.ts';

export type RpcId = string | number | null;

/** A request object that passed framing (DECISIONS 3). `notification`: it had no id and gets no answer. */
export interface RpcCall {
  id: RpcId;
  notification: boolean;
  method: string;
  params: unknown[];
}

/** One item of the body after framing: a call to run, or an error to answer at once. */
export type FramedItem = RpcCall | { id: RpcId; notification: boolean; error: GatewayError };

export interface FramedBody {
  /** The body was a JSON array (answers go back as an array, with HTTP 200). */
  batch: boolean;
  items: FramedItem[];
}

/**
 * Parses and frames a body: a single request is a batch of one, so there is one path (DECISIONS 3).
 * Throws a GatewayError for what fails the body as a whole: not JSON, empty or oversized batch.
 */
export function frameBody(body: Buffer | string, maxBatch: number): FramedBody {
  let doc: unknown;
  try {
    doc = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    throw new GatewayError('PARSE_ERROR');
  }
  if (!Array.isArray(doc)) return { batch: false, items: [frameItem(doc)] };
  if (doc.length === 0) throw new GatewayError('INVALID_REQUEST', { detail: 'empty batch' });
  if (doc.length > maxBatch) {
    throw new GatewayError('INVALID_REQUEST', { detail: `batch of ${doc.length} requests exceeds the limit of ${maxBatch}` });
  }
  const items = new Array<FramedItem>(doc.length);
  for (let i = 0; i < doc.length; i++) items[i] = frameItem(doc[i]);
  return { batch: true, items };
}

/** Frames one request object. Unknown members are ignored. */
export function frameItem(raw: unknown): FramedItem {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return invalid(null, false, 'a request must be a JSON object');
  }
  const o = raw as Record<string, unknown>;
  const hasId = o.id !== undefined;
  const id = o.id;
  // A number too large for a double (1e400) parses to Infinity, which has no JSON form: echoed, it made the
  // answer invalid JSON (`"id":Infinity`). It is refused like any other id that cannot be echoed.
  if (hasId && id !== null && typeof id !== 'string' && (typeof id !== 'number' || !Number.isFinite(id))) {
    return invalid(null, false, 'id must be a string, a finite number or null');
  }
  const rid = hasId ? (id as RpcId) : null;
  if (o.jsonrpc !== undefined && o.jsonrpc !== '2.0') return invalid(rid, !hasId, 'jsonrpc must be "2.0"');
  if (typeof o.method !== 'string' || o.method.length === 0) return invalid(rid, !hasId, 'method must be a non-empty string');
  let params = o.params;
  if (params === undefined) params = [];
  else if (!Array.isArray(params)) {
    return { id: rid, notification: !hasId, error: new GatewayError('INVALID_PARAMS', { detail: 'params must be an array' }) };
  }
  return { id: rid, notification: !hasId, method: o.method, params: params as unknown[] };
}

function invalid(id: RpcId, notification: boolean, detail: string): FramedItem {
  // An object that is not a valid request is answered even without an id (JSON-RPC 2.0 section 5).
  void notification;
  return { id, notification: false, error: new GatewayError('INVALID_REQUEST', { detail }) };
}
