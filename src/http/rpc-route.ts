import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authorizeRequest } from '../auth/authorize.ts';
import type { KeyResolver } from '../auth/key-resolver.ts';
import type { Config } from '../config/schema.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { frameBody, type FramedItem } from '../rpc/framing.ts';
import { runItem, type RequestContext } from '../rpc/pipeline.ts';
import { responseJson } from '../rpc/respond.ts';
import type { Networks } from '../upstream/networks.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import { sendError } from './send-error.ts';

interface Params { network: string; apikey?: string }

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/**
 * The JSON-RPC endpoint, `POST /v1/{network}/{apikey}` and its aliases (DECISIONS 2). Request-level stages
 * run here in order (content type → parse → network → authenticate), then each item runs the item pipeline.
 */
export function registerRpcRoutes(app: FastifyInstance, deps: { config: Readonly<Config>; networks: Networks; keys: KeyResolver }) {
  const { config, networks, keys } = deps;
  const maxBatch = config.rpc.maxBatchSize;
  const concurrency = config.rpc.batchConcurrency;

  const handler = async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    let { network: netName, apikey } = req.params;
    // `/v1/{network}` without a key matches `/{network}/{apikey}` with network "v1".
    if (netName === 'v1' && req.routeOptions.url === '/:network/:apikey') [netName, apikey] = [apikey!, undefined];

    // Stage content-type (DECISIONS 2: application/json with any charset, or absent).
    const type = req.headers['content-type'];
    if (type !== undefined && !JSON_TYPE.test(type)) return sendError(reply, new GatewayError('UNSUPPORTED_MEDIA_TYPE', { type: type.slice(0, 64) }));

    // Stage parse: the whole body, framed into items (DECISIONS 3).
    let framed;
    try {
      framed = frameBody(req.body as Buffer, maxBatch);
    } catch (err) {
      return sendError(reply, err as GatewayError);
    }
    const firstId = framed.batch ? null : framed.items[0].id;

    // Stage network.
    const network = networks.get(netName);
    if (!network) return sendError(reply, new GatewayError('UNKNOWN_NETWORK', { network: netName.slice(0, 64) }), firstId);

    // Stage authenticate: the key in the path (spec: Authentication); then authorize what applies to the request.
    let key;
    const origin = req.headers.origin;
    try {
      key = await keys.resolve(apikey);
      authorizeRequest(key, { ip: req.ip, origin, network: network.name });
    } catch (err) {
      return sendError(reply, err as GatewayError, firstId);
    }
    // A key restricted to origins answers CORS for its own origin only (DECISIONS 2).
    if (key.origins && origin) reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
    if (framed.batch && framed.items.length > key.plan.maxBatchSize) {
      const detail = `batch of ${framed.items.length} requests exceeds the limit of ${key.plan.maxBatchSize} of the ${key.plan.name} plan`;
      return sendError(reply, new GatewayError('INVALID_REQUEST', { detail }));
    }

    const ctx: RequestContext = { network, key, requestId: req.id };
    const { items } = framed;
    if (!framed.batch) {
      const item = items[0];
      const answer = await answerItem(ctx, item, req);
      if (item.notification) return reply.code(204).send();
      const status = 'error' in item ? item.error.status : answer.status;
      return reply.code(status).type('application/json').send(responseJson(item.id, answer.answer));
    }
    const answers = await mapBounded(items, concurrency, (item) => answerItem(ctx, item, req));
    const parts: string[] = [];
    for (let i = 0; i < items.length; i++) if (!items[i].notification) parts.push(responseJson(items[i].id, answers[i].answer));
    if (parts.length === 0) return reply.code(204).send();
    return reply.code(200).type('application/json').send(`[${parts.join(',')}]`);
  };

  app.post('/v1/:network/:apikey', handler);
  app.post('/:network/:apikey', handler);
  app.post('/v1/:network', handler);
  app.post('/v1/:network/', handler);
}

/** Runs one item; a gateway error becomes its answer, with the status it would give alone. */
async function answerItem(ctx: RequestContext, item: FramedItem, req: FastifyRequest): Promise<{ answer: UpstreamAnswer; status: number }> {
  if ('error' in item) return { answer: { error: item.error.toJSON() }, status: item.error.status };
  try {
    return { answer: await runItem(ctx, item), status: 200 };
  } catch (err) {
    const e = err instanceof GatewayError ? err : internal(err, req);
    return { answer: { error: e.toJSON() }, status: e.status };
  }
}

function internal(err: unknown, req: FastifyRequest): GatewayError {
  req.log.error({ err }, 'unexpected error in the request pipeline');
  return new GatewayError('INTERNAL');
}

/** Like Promise.all over `items`, with at most `limit` in flight; results keep the order of `items`. */
async function mapBounded<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
