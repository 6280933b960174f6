import type { FastifyReply } from 'fastify';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { RpcId } from '../rpc/framing.ts';
import { responseJson } from '../rpc/respond.ts';

/** Answers a whole HTTP request with one catalogued error: its status, and a JSON-RPC error body. */
export function sendError(reply: FastifyReply, err: GatewayError, id: RpcId = null): FastifyReply {
  return reply.code(err.status).type('application/json').send(responseJson(id, { error: err.toJSON() }));
}
