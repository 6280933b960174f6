import { GatewayError } from '../errors/gateway-error.ts';
import { rawNumericIds } from './raw-ids.ts';

/**
 * A numeric id a double cannot hold exactly (an integer beyond 2^53, or more digits than a double keeps): its
 * JSON text as the client sent it. docs/decisions.md §3 says ids are echoed exactly; JSON.parse would turn
 * 12345678901234567890 into 12345678901234567000, and a client matching answers by id would never find its own.
 */
export class ExactNumberId {
  constructor(readonly json: string) {}
}

export type RpcId = string | number | null | ExactNumberId;

/** A request object that passed framing (docs/decisions.md §3). `notification`: it had no id and gets no answer. */
export interface RpcCall {
  id: RpcId;
  notification: boolean;
  method: string;
  params: unknown[];
  /**
   * `params` was present but not an array (an object or a scalar): -32602, but only once the method is known to
   * exist, so an unknown method is -32601 whatever its params (the JSON-RPC 2.0 spec's `foo.get` example).
   */
  paramsNotArray?: true;
}

/** One item of the body after framing: a call to run, or an error to answer at once. */
export type FramedItem = RpcCall | { id: RpcId; notification: boolean; error: GatewayError };

export interface FramedBody {
  /** The body was a JSON array (answers go back as an array, with HTTP 200). */
  batch: boolean;
  items: FramedItem[];
}

/**
 * Where a body stops being JSON, as a person finds it in an editor: the line and column (V8's message gives the
 * offset), or that it ended early, or that it is empty. Nothing of the body itself is repeated.
 */
function whereJsonStops(text: string, err: unknown): string {
  if (text.trim() === '') return 'the body is empty';
  const message = String((err as Error)?.message);
  const at = /position (\d+)/.exec(message)?.[1];
  const token = /^Unexpected token '(.)'/.exec(message)?.[1];
  if (at === undefined && token !== undefined) return `not valid JSON: unexpected character '${token}'`;
  const offset = at === undefined ? text.length : Number(at);
  if (offset >= text.length) return `the JSON ends early, at line ${text.split('\n').length} (a bracket, brace or quote left open)`;
  const before = text.slice(0, offset).split('\n');
  return `not valid JSON at line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

/**
 * Parses and frames a body: a single request is a batch of one, so there is one path (docs/decisions.md §3).
 * Throws a GatewayError for what fails the body as a whole: not JSON, empty or oversized batch.
 */
export function frameBody(body: Buffer | string | undefined, maxBatch: number): FramedBody {
  // A POST without a body (and without a content type) has none: nothing to parse is a parse error.
  if (body === undefined) throw new GatewayError('PARSE_ERROR', { detail: 'the body is empty' });
  const text = typeof body === 'string' ? body : body.toString('utf8');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new GatewayError('PARSE_ERROR', { detail: whereJsonStops(text, err) });
  }
  if (!Array.isArray(doc)) {
    const items = [frameItem(doc)];
    if (inexactId(items[0])) exactIds(text, items, false);
    return { batch: false, items };
  }
  if (doc.length === 0) throw new GatewayError('INVALID_REQUEST', { detail: 'empty batch' });
  if (doc.length > maxBatch) {
    throw new GatewayError('INVALID_REQUEST', { detail: `batch of ${doc.length} requests exceeds the limit of ${maxBatch}` });
  }
  const items = new Array<FramedItem>(doc.length);
  let inexact = false;
  for (let i = 0; i < doc.length; i++) {
    items[i] = frameItem(doc[i]);
    if (inexactId(items[i])) inexact = true;
  }
  if (inexact) exactIds(text, items, true);
  return { batch: true, items };
}

/** A numeric id whose text a double may not give back: the only case that needs its text read from the body. */
const inexactId = (item: FramedItem) => typeof item.id === 'number' && !Number.isSafeInteger(item.id);

/**
 * The rare path: each inexact numeric id is replaced by its exact text, found by one bounded scan of the body
 * (src/rpc/raw-ids.ts), never by parsing the body a second time.
 */
function exactIds(text: string, items: FramedItem[], batch: boolean): void {
  const raw = rawNumericIds(text, batch);
  for (let i = 0; i < items.length; i++) {
    const id = raw[i];
    if (inexactId(items[i]) && id !== undefined) items[i].id = new ExactNumberId(id);
  }
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
  const params = o.params;
  if (params === undefined) return { id: rid, notification: !hasId, method: o.method, params: [] };
  if (!Array.isArray(params)) return { id: rid, notification: !hasId, method: o.method, params: [], paramsNotArray: true };
  return { id: rid, notification: !hasId, method: o.method, params };
}

function invalid(id: RpcId, notification: boolean, detail: string): FramedItem {
  // An object that is not a valid request is answered even without an id (JSON-RPC 2.0 section 5).
  void notification;
  return { id, notification: false, error: new GatewayError('INVALID_REQUEST', { detail }) };
}
