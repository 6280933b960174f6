import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createRpcEndpoint, UNREAD_BODY_BYTES, type Admitted, type Framed, type Limited, type Refusal } from '../rpc/endpoint.ts';
import type { EndpointDeps } from '../rpc/endpoint-deps.ts';
import { sendAnswers } from '../rpc/send-answers.ts';
import { sendError } from './send-error.ts';

export interface Params { network: string; apikey?: string }

/**
 * The network and key a request names: `/v1/{network}` without a key matches `/{network}/{apikey}` with network
 * "v1". The same for a POST and a WebSocket upgrade.
 */
export function networkAndKey(req: FastifyRequest<{ Params: Params }>): { network: string; apikey: string | undefined } {
  const { network, apikey } = req.params;
  if (network === 'v1' && req.routeOptions.url === '/:network/:apikey') return { network: apikey!, apikey: undefined };
  return { network, apikey };
}

/** The endpoint's paths (docs/decisions.md §2): HTTP POSTs them, a WebSocket upgrades a GET of them. */
export const RPC_URLS = ['/v1/:network/:apikey', '/:network/:apikey', '/v1/:network', '/v1/:network/'] as const;

declare module 'fastify' {
  interface FastifyRequest {
    /** What admission decided before the body was read (rpc/admit.ts). */
    admitted?: Admitted;
  }
}

export type RpcRouteDeps = Omit<EndpointDeps, 'guard' | 'responses' | 'framingCost'>;

/**
 * The JSON-RPC endpoint over HTTP, `POST /v1/{network}/{apikey}` and its aliases (docs/decisions.md §2): admit →
 * frame → limit → run → respond. The stages live in src/rpc (rpc/endpoint.ts, docs/pipeline.md); this file only
 * turns HTTP into their inputs and their results into HTTP.
 */
export function registerRpcRoutes(app: FastifyInstance, rpc: ReturnType<typeof createRpcEndpoint>) {
  /**
   * Admission, as the request arrives (`onRequest`): before its body is read or parsed. A callback hook, not an
   * async one: admission is decided at once in the common case, and a promise per hook and stage was most of
   * what the pipeline added per request (docs/performance.md).
   */
  const admit = (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply, done: (err?: Error) => void) => {
    const { network, apikey } = networkAndKey(req);
    const declared = Number(req.headers['content-length'] ?? 0);
    const largeBody = req.headers['transfer-encoding'] !== undefined || !(declared <= UNREAD_BODY_BYTES);
    const a = rpc.admit({ network, apikey, contentType: req.headers['content-type'], ip: req.ip, origin: req.headers.origin, declaredBytes: declared, largeBody, log: req.log });
    if (a instanceof Promise) a.then((x) => admitted(req, reply, x, largeBody, done), done);
    else admitted(req, reply, a, largeBody, done);
  };

  const admitted = (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply, a: Admitted | Refusal, largeBody: boolean, done: () => void) => {
    if ('network' in a) {
      req.admitted = a;
      return done();
    }
    // A refusal closes the connection when a large body is on its way: keeping it open would mean reading (and
    // throwing away) the whole body to find the next request, the very work a refusal before the body saves.
    if (largeBody) {
      reply.header('connection', 'close');
      // Stop pulling the body off the wire now: on loopback a 1 MiB body is all in the kernel before the headers
      // are handled, and reading it only to throw it away cost a refused attacker's victims ~x2.5 (issue 17).
      req.raw.socket?.pause();
    }
    refuse(reply, a); // answered here: the hook does not call done, and the handler never runs
  };

  /** frame → limit, at once when nothing is waited for; then run → respond. */
  const handler = (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    const t0 = performance.now();
    const adm = req.admitted!;
    // A key restricted to origins answers CORS for its own origin only (docs/decisions.md §2).
    const origin = req.headers.origin;
    if (adm.key.origins && origin) reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
    const framed = rpc.frame(adm, req.body as Buffer | undefined);
    if (framed instanceof Promise) return framed.then((r) => refuse(reply, r));
    const limited = rpc.limit(adm, framed, req.id, req.log, t0);
    if (limited instanceof Promise) return limited.then((l) => ('refused' in l ? refuse(reply, l) : run(req, reply, framed, l, t0)));
    if ('refused' in limited) return Promise.resolve(refuse(reply, limited));
    return run(req, reply, framed, limited, t0);
  };

  const run = (req: FastifyRequest, reply: FastifyReply, framed: Framed, limited: Limited, t0: number) => {
    if (limited.decision) rateHeaders(reply, limited.decision);
    // The caller closing its connection stops its calls: the node requests are aborted, no further item starts.
    const deadline = rpc.deadline();
    // (Left on: it runs once, when the response is done, and then does nothing.)
    reply.raw.once('close', () => { if (!reply.raw.writableFinished) deadline.callerGone(); });
    return rpc.run(framed, limited, deadline, t0, req.log).then((ran) => {
      if (ran.cache) reply.header('x-cache', ran.cache);
      return sendAnswers(reply, framed.batch, framed.items, ran.answers, ran.pieces, ran.held);
    });
  };

  for (const url of RPC_URLS) app.post(url, { onRequest: admit }, handler);
}

/** A refused request: its error; 429s carry Retry-After (whole seconds, at least 1); the bucket's RateLimit headers. */
function refuse(reply: FastifyReply, r: Refusal): FastifyReply {
  if (r.refused.status === 429) reply.header('retry-after', String(Math.max(1, Math.ceil(Number(r.refused.data.retryAfter ?? 1)))));
  if (r.decision) rateHeaders(reply, r.decision);
  return sendError(reply, r.refused, r.id);
}

function rateHeaders(reply: FastifyReply, d: NonNullable<Refusal['decision']>): void {
  reply.header('ratelimit-limit', String(d.limit)).header('ratelimit-remaining', String(d.remaining)).header('ratelimit-reset', String(d.resetSeconds));
}
