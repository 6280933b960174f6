import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';
import { responseJson } from '../rpc/respond.ts';
import { sendError } from './send-error.ts';

/**
 * Answers what node's HTTP parser refuses before fastify has a request (malformed HTTP, headers too large, a
 * request that did not arrive within `server.requestTimeoutMs`: a slow-loris body) with a catalogued JSON-RPC
 * error like every other answer. fastify's default writes a body of its own shape.
 */
export function clientErrorHandler(requestTimeoutMs: number) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset connection has nobody to answer (https://nodejs.org/api/http.html#event-clienterror).
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const e = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new GatewayError('REQUEST_TIMEOUT', { limit: requestTimeoutMs })
      : new GatewayError('INVALID_REQUEST', { detail: err.code === 'HPE_HEADER_OVERFLOW' ? 'request headers too large' : 'malformed HTTP request' });
    // As node does: never write into a response that has already started on this socket.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const body = responseJson(null, { error: e.toJSON() });
      socket.write(`HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    }
    socket.destroy();
  };
}

/**
 * fastify's router answers an undecodable path (`%ff`) or an over-long path segment itself, echoing the whole
 * path: that can hold an API key, which error bodies never echo (docs/decisions.md §5). These get a catalogued error.
 */
export function frameworkErrors(err: { code?: string }, req: FastifyRequest, reply: FastifyReply): void {
  // No hook has run for these requests: the headers every response carries are set here.
  reply.header('x-request-id', req.id).header('access-control-allow-origin', '*');
  const detail = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path segment is too long' : 'malformed URL';
  sendError(reply, new GatewayError('INVALID_REQUEST', { detail }));
}
