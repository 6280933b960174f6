import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { RequestLog } from '../analytics/request-log.ts';
import type { KeyStore } from '../store/keys/key-store.ts';
import type { RequestQuery, RequestRecord, RequestStore } from '../store/requests/request-store.ts';
import { ApiError } from './errors.ts';
import { errorResponses } from './schemas.ts';

const member: Record<string, string[]>[] = [{ session: [] }, { apiKey: [] }];
const operator: Record<string, string[]>[] = [{ session: [] }, { apiKey: [] }, { operatorPassword: [] }];
const tags = ['analytics'];

type Query = { Querystring: { requestId?: string; keyId?: string; network?: string; method?: string; outcome?: string; from?: string; to?: string; limit?: string; cursor?: string; accountId?: string } };

const filters = {
  requestId: { type: 'string', maxLength: 128, description: 'the X-Request-Id of the request' },
  keyId: { type: 'string', maxLength: 64 },
  network: { type: 'string', maxLength: 64 },
  method: { type: 'string', maxLength: 128, description: 'one method, as recorded (`(invalid)`: none was read)' },
  outcome: { type: 'string', maxLength: 12, description: '`ok`, `error`, or one JSON-RPC error code such as -32601' },
  from: { type: 'string', description: 'ISO time, included' },
  to: { type: 'string', description: 'ISO time, excluded' },
  limit: { type: 'string', pattern: '^(?:[1-9][0-9]?|100)$', description: 'records per page, 1-100 (default 50)' },
  cursor: { type: 'string', pattern: '^[0-9]{1,19}$', description: 'nextCursor of the page before' },
} as const;
const memberQuery = { type: 'object', additionalProperties: false, properties: filters } as const;
const operatorQuery = { type: 'object', additionalProperties: false, properties: { ...filters, accountId: { type: 'string', maxLength: 64, description: 'one account (default: all)' } } } as const;

const recordSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' }, at: { type: 'string' }, accountId: { type: 'string' }, keyId: { type: 'string' }, keyName: { type: ['string', 'null'] },
    network: { type: 'string' }, method: { type: 'string' }, code: { type: 'integer', description: '0: a result' },
    message: { type: ['string', 'null'], description: 'the error, cut to explorer.maxMessageChars' },
    latencyMs: { type: 'number' }, computeUnits: { type: 'integer' }, requestBytes: { type: 'integer' }, responseBytes: { type: 'integer' },
    cache: { type: ['string', 'null'], description: '`HIT`, `MISS`, or null when the method is not cached' },
    node: { type: ['string', 'null'], description: 'the upstream that answered; null: the gateway did' },
    requestId: { type: 'string' }, params: { type: ['string', 'null'], description: 'JSON, cut to explorer.maxParamsChars' },
    sampleEvery: { type: 'integer', description: '1: every call kept; n: 1 in n was (the account was past its share)' },
  },
} as const;
const page = {
  description: 'Recorded requests, newest first, and the cursor of the next page (null after the last)',
  type: 'object', required: ['requests', 'nextCursor'],
  properties: { requests: { type: 'array', items: recordSchema }, nextCursor: { type: ['string', 'null'] } },
} as const;

/** The filters of a query string as the store reads them; refuses what it cannot read. */
function queryOf(q: Query['Querystring'], accountId: string | undefined): RequestQuery {
  const time = (v: string | undefined, name: string) => {
    if (v === undefined) return undefined;
    const t = Date.parse(v);
    if (Number.isNaN(t)) throw new ApiError(400, 'validation_failed', `${name} is not a time (ISO 8601, e.g. 2026-11-23T10:00:00Z)`, name);
    return new Date(t).toISOString();
  };
  let outcome: RequestQuery['outcome'];
  if (q.outcome === 'ok' || q.outcome === 'error') outcome = q.outcome;
  else if (q.outcome !== undefined) {
    if (!/^-?\d{1,6}$/.test(q.outcome)) throw new ApiError(400, 'validation_failed', 'outcome must be ok, error, or an error code such as -32601', 'outcome');
    outcome = Number(q.outcome);
  }
  return {
    accountId, requestId: q.requestId, keyId: q.keyId, network: q.network, method: q.method, outcome,
    from: time(q.from, 'from'), to: time(q.to, 'to'), before: q.cursor, limit: q.limit === undefined ? 50 : Number(q.limit),
  };
}

/**
 * The request explorer (docs/request-explorer.md): `GET /requests` the calling account's recorded requests,
 * `GET /operator/requests` anyone's. Both write this instance's buffer first, so a call answered a moment ago is
 * found. 404 when the operator turned the explorer off (`explorer.enabled`).
 */
export async function requestRoutes(api: FastifyInstance, opts: {
  store: { requests: RequestStore; keys: KeyStore };
  requests: RequestLog | undefined;
  authenticate: onRequestAsyncHookHandler;
  operator: onRequestAsyncHookHandler;
}) {
  const { store, requests } = opts;
  const list = async (q: RequestQuery) => {
    if (!requests) throw new ApiError(404, 'not_found', 'the request explorer is turned off on this gateway (explorer.enabled)');
    await requests.flush();
    const rows = await store.requests.listRequests({ ...q, limit: q.limit + 1 });
    const more = rows.length > q.limit;
    const shown = more ? rows.slice(0, q.limit) : rows;
    return { requests: await named(shown), nextCursor: more ? shown[shown.length - 1].id! : null };
  };
  /** Each record with its key's name (looked up once per key of the page). */
  const named = async (rows: RequestRecord[]) => {
    const names = new Map<string, string | null>();
    for (const r of rows) if (!names.has(r.keyId)) names.set(r.keyId, (await store.keys.getKey(r.keyId))?.name ?? null);
    return rows.map((r) => ({ ...r, keyName: names.get(r.keyId) ?? null }));
  };

  api.register(async (m) => {
    m.addHook('onRequest', opts.authenticate);
    m.get<Query>('/requests', {
      schema: { summary: "The calling account's recent requests, newest first, a page at a time", tags, querystring: memberQuery, security: member, response: { 200: page, ...errorResponses(400, 401, 403, 404) } },
    }, async (req) => list(queryOf(req.query, req.principal!.account.id)));
  });
  api.register(async (op) => {
    op.addHook('onRequest', opts.operator);
    op.get<Query>('/operator/requests', {
      schema: { summary: "Any account's recent requests (default: every account's), newest first", tags, querystring: operatorQuery, security: operator, response: { 200: page, ...errorResponses(400, 401, 403, 404) } },
    }, async (req) => list(queryOf(req.query, req.query.accountId)));
  });
}
