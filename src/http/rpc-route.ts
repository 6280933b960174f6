import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RPC_URLS } from './rpc-paths.ts';

export { RPC_URLS } from './rpc-paths.ts';

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

type Handle = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, network: string, apikey: string | undefined) => void;

/**
 * The endpoint's POST routes in fastify's router, for the paths the server does not answer before it
 * (rpc-paths.ts: an encoded segment, a first segment a static route shares): as the request arrives, before its
 * body, the request is taken from fastify and answered by the same HTTP transport (rpc-http.ts), so every path
 * of the endpoint is answered alike.
 */
export function registerRpcRoutes(app: FastifyInstance, handle: Handle): void {
  const onRequest = (req: FastifyRequest<{ Params: Params }>, reply: import('fastify').FastifyReply) => {
    reply.hijack();
    const { network, apikey } = networkAndKey(req);
    handle(req.raw, reply.raw, network, apikey);
  };
  const never = () => undefined; // the request was taken in onRequest: fastify runs no handler
  for (const url of RPC_URLS) app.post(url, { onRequest }, never);
}
