import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import websocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { AccountsService } from '../accounts/service.ts';
import { API_PREFIX, registerApi } from '../api/register.ts';
import type { KeyResolver } from '../auth/key-resolver.ts';
import type { Limits } from '../limits/limits.ts';
import type { OpenedRateLimiter } from '../shared-state/rate-limiter/rate-limiter.ts';
import type { Config } from '../config/schema.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Stores } from '../store/stores.ts';
import type { Networks } from '../networks/networks.ts';
import { clientErrorHandler, frameworkErrors } from './client-errors.ts';
import { capConnections } from './connection-caps.ts';
import { Drain } from './drain.ts';
import { registerHealthRoutes } from './health.ts';
import { redactPath } from '../errors/redact.ts';
import { registerRpcRoutes, RPC_URLS } from './rpc-route.ts';
import { plainRpcPathOf } from './rpc-paths.ts';
import { createRpcHttp } from './rpc-http.ts';
import { EXPOSED_HEADERS, requestIdOf } from './rpc-exchange.ts';
import { closeSockets, registerWsRoutes } from './ws-route.ts';
import { createRpcEndpoint } from '../rpc/endpoint.ts';
import { registerMetricsRoute } from './metrics-route.ts';
import { registerDashboard } from './dashboard-route.ts';
import type { Metrics } from '../analytics/metrics.ts';
import type { RefusalLog } from '../analytics/refusal-log.ts';
import type { UsageRecorder } from '../analytics/usage-recorder.ts';
import type { RequestLog } from '../analytics/request-log.ts';
import type { Resolve } from '../webhooks/target-guard.ts';
import { sendError } from './send-error.ts';
import type { SharedState } from '../shared-state/open-shared-state.ts';
import type { TeamService } from '../accounts/team.ts';

export interface ServerDeps {
  config: Readonly<Config>;
  log: Logger;
  networks: Networks;
  keys: KeyResolver;
  store: Stores;
  accounts: AccountsService;
  /** Members, invitations, sign-up and resets. */
  team: TeamService;
  limits: Limits | undefined;
  rateLimiter: OpenedRateLimiter;
  usage?: UsageRecorder;
  /** The request explorer's recorder; absent when `explorer.enabled` is false. */
  requests?: RequestLog;
  webhooks?: { resolve: Resolve; written: () => void; changed: () => Promise<void> };
  metrics?: Metrics;
  refusals?: RefusalLog;
  /** The shared state's budgets and login back-off (open-shared-state.ts); absent: this process's memory. */
  shared?: Pick<SharedState, 'eventBudgets' | 'loginBackoff'>;
}

/** The HTTP server, and how it lets go of its connections as it stops (drain.ts: `drain.start()` before `app.close()`). */
export interface BuiltServer { app: FastifyInstance; drain: Drain }

/** Builds the HTTP server: fastify with the endpoint, health checks, CORS and catalogued errors. */
export function buildServer(deps: ServerDeps): BuiltServer {
  const { config, log } = deps;
  /** The first segments of every route but the endpoint's: `/{network}/{apikey}` is theirs when one is taken. */
  const staticFirst = new Set<string>();
  let rpcHttp: ReturnType<typeof createRpcHttp> | undefined;
  /** The connection caps' count of requests in flight per connection (connection-caps.ts), set once the server is. */
  let track: ReturnType<typeof capConnections>['track'] | undefined;
  const app = Fastify({
    // A POST of the endpoint's plain paths is answered by node:http and the pipeline alone (rpc-http.ts):
    // fastify's per-request lifecycle was most of what a cache hit cost. Everything else goes through fastify.
    serverFactory: (handler, o) => {
      const server = createServer(o.http ?? {}, (req: IncomingMessage, res: ServerResponse) => {
        track?.(req, res);
        const m = req.method === 'POST' && rpcHttp ? plainRpcPathOf(req.socket, req.url ?? '', staticFirst) : undefined;
        if (m) rpcHttp!.handle(req, res, m.network, m.apikey);
        else handler(req, res);
      });
      // As fastify sets up a server it makes itself.
      const n = o as { keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number; maxRequestsPerSocket: number };
      server.keepAliveTimeout = n.keepAliveTimeout;
      server.requestTimeout = n.requestTimeout;
      server.setTimeout(n.connectionTimeout);
      if (n.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = n.maxRequestsPerSocket;
      return server;
    },
    loggerInstance: log as unknown as FastifyBaseLogger,
    // fastify's two log lines per request cost more than the request; an optional one-liner is below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.server.bodyLimit,
    // fastify's default is no limit at all: a client trickling its body would hold its connection forever.
    // node checks the deadline on a shared timer, every connectionsCheckingInterval (30 s by default: too coarse),
    // and enforces it on a body only when headersTimeout is not longer (otherwise a trickled body lasted 60 s).
    requestTimeout: config.server.requestTimeoutMs,
    http: {
      requestTimeout: config.server.requestTimeoutMs,
      headersTimeout: Math.min(60_000, config.server.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.round(config.server.requestTimeoutMs / 10))),
    },
    clientErrorHandler: clientErrorHandler(config.server.requestTimeoutMs),
    frameworkErrors,
    // The caller's id is kept when it is safe to echo; otherwise one is made (X-Request-Id on every response).
    genReqId: (req) => requestIdOf(req.headers['x-request-id']),
    trustProxy: config.server.trustedProxies.length > 0 ? [...config.server.trustedProxies] : false,
    // A request that reaches a stopping instance on a connection it already had is served (with `Connection: close`),
    // not refused with fastify's plain 503: the pipeline works until the server has closed, and a balancer does not
    // resend a POST that got an answer (1 of 297 calls failed so during a rolling restart behind nginx).
    return503OnClosing: false,
    // Idle keep-alive connections are closed by the drain (drain.ts), once quiet: not all at once as the server closes.
    forceCloseConnections: false,
  });

  app.addHook('onRoute', (r) => {
    const first = r.url.split('/')[1] ?? '';
    if (first && !first.startsWith(':') && !first.startsWith('*') && !(RPC_URLS as readonly string[]).includes(r.url)) staticFirst.add(first);
  });

  const s = config.server;
  const connections = capConnections(app.server, {
    total: s.maxConnections, perIp: s.maxConnectionsPerIp, perSubnet: s.maxConnectionsPerSubnet, trustedProxies: s.trustedProxies,
    pressure: s.connectionPressure, pressureIdleMs: s.pressureIdleTimeoutMs,
  });
  track = connections.track;
  const drain = new Drain(app.server, connections);

  // WebSocket upgrades go through fastify's router and hooks: registered before every route, so that a
  // route without a wsHandler refuses an upgrade. Sockets are closed with 1001 as the server stops.
  void app.register(websocket, {
    options: { maxPayload: config.server.bodyLimit },
    preClose: async () => {
      await closeSockets(app.websocketServer.clients);
      await new Promise<void>((r) => app.websocketServer.close(() => r()));
    },
  });

  // Bodies are read raw: the gateway frames JSON-RPC itself, and the content type is checked by the route.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    // Browser dapps call the JSON-RPC endpoint directly (docs/decisions.md §2); the management API is for the dashboard and
    // scripts, and answers no other origin (no CORS for it: a page elsewhere cannot read or change accounts).
    if (!req.url.startsWith(API_PREFIX) && !req.url.startsWith('/dashboard') && !req.url.startsWith('/metrics')) {
      reply.header('access-control-allow-origin', '*');
      // Without this a browser hides these from the dapp's scripts: a client there could not honour Retry-After.
      reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    }
    done();
  });

  if (config.log.requests) {
    app.addHook('onResponse', (req, reply, done) => {
      req.log.info({ method: req.method, path: redactPath(req.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 }, 'request');
      done();
    });
  }

  const rpc = createRpcEndpoint(deps);
  const fast = createRpcHttp({ config, log, rpc, draining: () => drain.draining });
  registerRpcRoutes(app, fast.handle);
  rpcHttp = fast;
  void app.register(async (scope) => registerWsRoutes(scope, rpc, config, RPC_URLS, deps.networks.subscriptions));
  registerHealthRoutes(app, deps);
  registerApi(app, deps);
  if (deps.metrics) registerMetricsRoute(app, deps.metrics, config.metrics.allow);
  if (config.dashboard.enabled) void app.register(registerDashboard);

  // Browser dapps call RPC endpoints directly (docs/decisions.md §2): answer the CORS preflight.
  const preflight = (_req: unknown, reply: import('fastify').FastifyReply) => {
    reply.code(204)
      .header('access-control-allow-methods', 'POST, OPTIONS')
      .header('access-control-allow-headers', 'content-type, x-request-id')
      .header('access-control-max-age', '86400')
      .send();
  };
  const notPost = (req: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply) => {
    reply.header('allow', 'POST');
    sendError(reply, new GatewayError('HTTP_METHOD_NOT_ALLOWED', { method: req.method }));
  };
  for (const url of ['/v1/:network/:apikey', '/:network/:apikey', '/v1/:network']) {
    app.options(url, preflight);
    app.route({ method: ['PUT', 'DELETE', 'PATCH'], url, handler: notPost });
  }

  app.setNotFoundHandler((_req, reply) => sendError(reply, new GatewayError('ROUTE_NOT_FOUND')));
  app.setErrorHandler((err: { code?: string; statusCode?: number }, req, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(reply, new GatewayError('BODY_TOO_LARGE', { limit: config.server.bodyLimit }));
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendError(reply, new GatewayError('UNSUPPORTED_MEDIA_TYPE', { type: '' }));
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendError(reply, new GatewayError('INVALID_REQUEST', { detail: 'malformed HTTP request' }));
    }
    req.log.error({ err }, 'unhandled error');
    return sendError(reply, new GatewayError('INTERNAL'));
  });
  return { app, drain };
}
