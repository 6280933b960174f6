import { catalogue } from '../../src/errors/catalogue.ts';

/** Catalogue rows by `data.reason`: how a gateway error is recognised on the wire (node errors carry no reason). */
const byReason = new Map<string, (typeof catalogue)[keyof typeof catalogue]>(Object.values(catalogue).map((e) => [e.reason, e]));

/** What was sent, as far as the oracle needs it. */
export interface Sent {
  body: Buffer;
  /** The path was the endpoint of a known network with the valid key, and the content type was JSON or absent. */
  envelopeOk: boolean;
  maxBatch: number;
  bodyLimit: number;
}

export interface Received {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);
const isEchoable = (id: unknown) => id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));

/**
 * A request object without an id: it gets no answer (docs/decisions.md §3), even when its method or params are refused
 * (-32601, -32602 are never sent for a notification); only an object that is not a request at all is answered.
 */
function isNotification(o: unknown): boolean {
  return isObject(o) && o.id === undefined && (o.jsonrpc === undefined || o.jsonrpc === '2.0')
    && typeof o.method === 'string' && o.method.length > 0;
}

function parse(buf: Buffer): { ok: true; doc: unknown } | { ok: false } {
  try {
    return { ok: true, doc: JSON.parse(buf.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

/** Problems with one response object of JSON-RPC 2.0 (section 5), or [] when it is well formed. */
function responseObjectProblems(a: unknown): string[] {
  if (!isObject(a)) return ['an answer is not an object'];
  const p: string[] = [];
  for (const k of Object.keys(a)) if (!['jsonrpc', 'id', 'result', 'error'].includes(k)) p.push(`unexpected member ${k}`);
  if (a.jsonrpc !== '2.0') p.push('jsonrpc is not "2.0"');
  if (!('id' in a) || !isEchoable(a.id)) p.push('id missing or not string/number/null');
  if (('result' in a) === ('error' in a)) p.push('not exactly one of result and error');
  if ('error' in a) {
    const e = a.error;
    if (!isObject(e) || !Number.isInteger(e.code) || typeof e.message !== 'string') p.push('error is not {code: integer, message: string}');
  }
  return p;
}

/**
 * Checks one answer of the endpoint against the contract (docs/decisions.md §3 and §5, docs/errors.md): a JSON-RPC
 * response object or array (or 204 with no body for notifications only), a gateway error with its catalogued
 * HTTP status and code, a node's error or a result with 200, never a 500, ids echoed. Returns the problems.
 */
export function answerProblems(sent: Sent, got: Received): string[] {
  const p: string[] = [];
  if (!got.headers['x-request-id']) p.push('no X-Request-Id');
  if (got.status >= 500 && got.status !== 503 && got.status !== 504) p.push(`HTTP ${got.status}`);
  const req = parse(sent.body);
  const doc = req.ok ? req.doc : undefined;
  const onlyNotifications = req.ok && sent.body.length <= sent.bodyLimit && (isNotification(doc)
    || (Array.isArray(doc) && doc.length > 0 && doc.length <= sent.maxBatch && doc.every(isNotification)));
  if (got.status === 204) {
    if (got.text !== '') p.push('204 with a body');
    if (!(sent.envelopeOk && onlyNotifications)) p.push('204 for a request that is not only notifications');
    return p;
  }
  if (sent.envelopeOk && onlyNotifications) p.push(`HTTP ${got.status} for notifications only (want 204)`);
  let ans: unknown;
  try {
    ans = JSON.parse(got.text);
  } catch {
    return [...p, `body is not JSON: ${got.text.slice(0, 120)}`];
  }
  if (!/^application\/json/.test(String(got.headers['content-type']))) p.push(`content-type ${got.headers['content-type']}`);
  if (Array.isArray(ans)) {
    if (got.status !== 200) p.push(`HTTP ${got.status} for an array answer`);
    if (ans.length === 0) p.push('empty array answer');
    if (!Array.isArray(doc)) p.push('array answer to a request that was not a batch');
    else if (ans.length > doc.length) p.push('more answers than requests');
    for (const a of ans) {
      p.push(...responseObjectProblems(a));
      const id = isObject(a) ? a.id : undefined;
      if (Array.isArray(doc) && id !== null && !doc.some((r) => isObject(r) && r.id === id)) p.push(`answer id ${String(id)} matches no request`);
      if (isObject(a) && isObject(a.error) && isObject(a.error.data) && a.error.data.reason === 'internal') p.push('Internal error in a batch item');
    }
    return p;
  }
  p.push(...responseObjectProblems(ans));
  if (!isObject(ans)) return p;
  const reason = isObject(ans.error) && isObject(ans.error.data) ? ans.error.data.reason : undefined;
  const row = typeof reason === 'string' ? byReason.get(reason) : undefined;
  if (row) {
    if (got.status !== row.status) p.push(`HTTP ${got.status} for ${reason} (catalogue: ${row.status})`);
    if ((ans.error as { code: number }).code !== row.code) p.push(`code ${(ans.error as { code: number }).code} for ${reason} (catalogue: ${row.code})`);
  } else if (got.status !== 200) {
    p.push(`HTTP ${got.status} for an answer that is not a catalogued error`);
  }
  // Ids come back exactly; an id that cannot be echoed, or an error before framing, gets null.
  if (ans.id !== null && isObject(doc) && !(isEchoable(doc.id) && doc.id === ans.id)) p.push(`id ${String(ans.id)} is not the request's`);
  return p;
}
