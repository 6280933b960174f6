import { performance } from 'node:perf_hooks'; // the global one is a getter on globalThis, called at each use
import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { UNREAD_BODY_BYTES, type Ran, type Admitted, type createRpcEndpoint, type Framed, type Limited, type Refusal } from '../rpc/endpoint.ts';
import { requestIdOf, RpcExchange } from './rpc-exchange.ts';
import { TurnWrites } from './turn-writes.ts';
import { WriteDeadlines } from './write-deadlines.ts';
import { tracing } from '../tracing/tracing.ts';

export interface RpcHttpDeps {
  config: Readonly<Config>;
  log: Logger;
  rpc: ReturnType<typeof createRpcEndpoint>;
  /** Whether the server is stopping (drain.ts): its answers close their connection (`Connection: close`). */
  draining: () => boolean;
}

/**
 * The JSON-RPC endpoint over HTTP, on node's own request and response: admit → body → frame → limit →
 * run → respond, with none of a framework's per-request lifecycle (routing tree, hooks, reply object, child logger,
 * content-type parsers), so that a cache hit costs little more than node:http itself. The stages are
 * rpc/endpoint.ts's; this file only turns HTTP into their inputs, and rpc-exchange.ts their results into HTTP.
 * `handle` takes a request whose path named the network and key (rpc-paths.ts) and answers it, whatever happens.
 */
export function createRpcHttp(deps: RpcHttpDeps) {
  const { config, rpc, log } = deps;
  const bodyLimit = config.server.bodyLimit;
  const logRequests = config.log.requests;
  // Who the client is behind trusted proxies (X-Forwarded-For), as fastify's trustProxy reads it for other routes.
  const trusted = config.server.trustedProxies.length > 0 ? proxyAddr.compile([...config.server.trustedProxies]) : undefined;

  /** Stage admit, as the request arrives: before its body is read (rpc/admit.ts). */
  const handle = (req: IncomingMessage, res: ServerResponse, network: string, apikey: string | undefined): void => {
    const t0 = performance.now();
    const x = new RpcExchange(req, res, requestIdOf(req.headers['x-request-id']), log, !deps.draining());
    if (logRequests) res.once('finish', () => x.logLine(t0));
    const trace = tracing.request('POST /v1/{network}', req.headers.traceparent, network);
    if (trace !== undefined) x.traced(trace);
    const declared = Number(req.headers['content-length'] ?? 0);
    const largeBody = req.headers['transfer-encoding'] !== undefined || !(declared <= UNREAD_BODY_BYTES);
    const ip = trusted ? proxyAddr(req, trusted) : req.socket.remoteAddress ?? '';
    let a;
    try {
      a = rpc.admit({ network, apikey, contentType: req.headers['content-type'], ip, origin: req.headers.origin, headers: req.headers, declaredBytes: declared, largeBody, log: x });
    } catch (err) {
      return x.fail(err);
    }
    if (a instanceof Promise) a.then((r) => admitted(x, r, declared, largeBody, t0), (err) => x.fail(err));
    else admitted(x, a, declared, largeBody, t0);
  };

  /** Refused: answered now. Admitted: its body read (at most server.bodyLimit), then framed. */
  const admitted = (x: RpcExchange, a: Admitted | Refusal, declared: number, largeBody: boolean, t0: number): void => {
    x.trace?.step('admit');
    if (!('network' in a)) {
      // A refusal closes the connection when a large body is on its way: keeping it open would mean reading (and
      // throwing away) the whole body to find the next request, the very work a refusal before the body saves.
      if (largeBody) x.leaveBodyUnread();
      return x.refuse(a);
    }
    if (declared > bodyLimit) {
      x.leaveBodyUnread();
      return x.errorAnswer(new GatewayError('BODY_TOO_LARGE', { limit: bodyLimit }));
    }
    const origin = x.req.headers.origin;
    if (a.key.origins && origin) x.origin = origin;
    x.readBody(bodyLimit, (body) => framed(x, a, body, t0));
  };

  /** frame → limit, at once when nothing is waited for; then run → respond. */
  const framed = (x: RpcExchange, adm: Admitted, body: Buffer | undefined, t0: number): void => {
    x.trace?.step('frame');
    const f = rpc.frame(adm, body);
    if (f instanceof Promise) return void f.then((r) => x.refuse(r), (err) => x.fail(err));
    const limited = rpc.limit(adm, f, x.id, x, t0);
    if (limited instanceof Promise) return void limited.then((l) => ('refused' in l ? x.refuse(l) : run(x, f, l, t0)), (err) => x.fail(err));
    if ('refused' in limited) return x.refuse(limited);
    run(x, f, limited, t0);
  };

  const run = (x: RpcExchange, f: Framed, l: Limited, t0: number): void => {
    x.decision = l.decision;
    x.trace?.step('limit');
    // The caller closing its connection stops its calls: the node requests are aborted, no further item starts.
    const deadline = rpc.deadline();
    let ran;
    try {
      if (x.trace !== undefined) deadline.traced(x.trace);
      ran = rpc.run(f, l, deadline, t0, x);
    } catch (err) {
      return x.fail(err);
    }
    writes.begin();
    // Answered at once (a cache hit): no node call to stop, no promise.
    if (!(ran instanceof Promise)) return writes.write({ x, f, ran });
    x.res.once('close', () => { if (!x.res.writableFinished) deadline.callerGone(); });
    ran.then((r) => writes.write({ x, f, ran: r }), (err) => { writes.end(); x.fail(err); });
  };

  /** A response holding bytes of the shared budget is cut off if its client has not read it in time. */
  const deadlines = new WriteDeadlines<ServerResponse>(config.server.writeTimeoutMs, (res) => res.writableFinished || res.destroyed, (res) => res.destroy());

  /** Answers go out together at the end of the event loop's turn while other requests are in progress (turn-writes.ts). */
  const writes = new TurnWrites<{ x: RpcExchange; f: Framed; ran: Ran }>((a) => {
    try {
      a.x.answers(a.f, a.ran);
      a.x.trace?.cached(a.ran.cache);
      if (a.ran.held.holdsTotal && !a.x.res.writableFinished) deadlines.watch(a.x.res);
    } catch (err) {
      a.x.fail(err);
    }
  });

  return { handle };
}
