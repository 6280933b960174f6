import type { FastifyInstance } from 'fastify';
import type { AccountsService } from '../accounts/service.ts';
import type { KeyResolver } from '../auth/key-resolver.ts';
import { UnknownKeyGuard } from '../limits/unknown-key-guard.ts';
import type { Config } from '../config/schema.ts';
import type { Stores } from '../store/stores.ts';
import { accountRoutes } from './account-routes.ts';
import { alertRoutes } from './alert-routes.ts';
import { apiAuthentication } from './auth.ts';
import { useJsonBodies } from './body.ts';
import { ApiError, apiErrorHandler, sendApiError } from './errors.ts';
import { describeStore } from '../store/open-store.ts';
import { openApiRoute, registerOpenApi } from './openapi.ts';
import { operatorRoutes } from './operator-routes.ts';
import cookie from '@fastify/cookie';
import { PasswordLogins } from './password-login.ts';
import type { SharedState } from '../shared-state/open-shared-state.ts';
import { sessionRoutes } from './session-routes.ts';
import { analyticsRoutes } from './analytics-routes.ts';
import { requestRoutes } from './request-routes.ts';
import { webhookRoutes } from './webhook-routes.ts';
import type { Resolve } from '../webhooks/target-guard.ts';
import type { Networks } from '../networks/networks.ts';
import type { UsageRecorder } from '../analytics/usage-recorder.ts';
import type { RequestLog } from '../analytics/request-log.ts';
import type { Limits } from '../limits/limits.ts';
import { Sessions } from './sessions.ts';
import { publicAccountRoutes, teamRoutes } from './team-routes.ts';
import type { TeamService } from '../accounts/team.ts';
import { SHARED_SCHEMAS } from './schemas.ts';

export const API_PREFIX = '/api/v1';

/**
 * The management REST API (`/api/v1`, JSON), in its own fastify context: JSON bodies checked by schema, its own
 * error shape and 404, and an OpenAPI document of exactly these routes (the JSON-RPC endpoint is outside this
 * context, so it is not in it). See docs/api.md.
 */
export function registerApi(app: FastifyInstance, deps: { config: Readonly<Config>; accounts: AccountsService; team: TeamService; keys: KeyResolver; store: Stores; networks: Networks; usage?: UsageRecorder; requests?: RequestLog; limits?: Limits; webhooks?: { resolve: Resolve; written: () => void; changed: () => Promise<void> }; shared?: Pick<SharedState, 'eventBudgets' | 'loginBackoff'> }): void {
  app.register(async (api) => {
    await registerOpenApi(api);
    for (const schema of SHARED_SCHEMAS) api.addSchema(schema);
    useJsonBodies(api, SHARED_SCHEMAS);
    api.decorateRequest('principal', null);
    // Every change says it is JSON, with a body or without (revoke, suspend): a cross-site form or a plain
    // fetch cannot send that content type without a CORS preflight, which this API never grants (no
    // Access-Control-Allow-Origin here), so no page elsewhere can make a change with a visitor's credentials.
    api.addHook('onRequest', async (req) => {
      if (req.method === 'GET' || req.method === 'HEAD') return;
      if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
        throw new ApiError(415, 'bad_request', 'a change must be sent as JSON (Content-Type: application/json), also without a body');
      }
    });
    // Admin changes leave a line: who (account and how they came in), what (route and target), with what outcome.
    api.addHook('onResponse', async (req, reply) => {
      if (req.method === 'GET' || req.method === 'HEAD' || !req.principal || reply.statusCode >= 400) return;
      const p = req.principal;
      req.log.info({
        actor: p.account.email, actorId: p.account.id, via: p.key ? `key ${p.key.key.prefix}` : p.session ? 'session' : 'password',
        change: `${req.method} ${req.routeOptions.url}`, target: (req.params as { id?: string } | undefined)?.id, status: reply.statusCode,
      }, 'management change');
    });
    api.setErrorHandler(apiErrorHandler(describeStore(deps.config)));
    api.setNotFoundHandler((req, reply) =>
      sendApiError(reply, new ApiError(404, 'not_found', `no route ${req.method} here; the routes are in ${API_PREFIX}/openapi.json`)));

    await api.register(cookie);
    const { perSecond, burst } = deps.config.limits.unknownKeys;
    // Shared state (Redis, the workers' primary): failures, login backoff, new sessions and calls per account count
    // across processes.
    const shared = deps.shared?.eventBudgets;
    const guard = new UnknownKeyGuard(perSecond, burst, shared, 'uk:api');
    const { failuresPerMinute, failureBurst, checksPerSubnet, sessionsPerMinute, sessionBurst } = deps.config.limits.logins;
    const logins = new PasswordLogins(deps.store, { failuresPerMinute, failureBurst, checksPerSubnet, sharedBudgets: shared, backoff: deps.shared?.loginBackoff });
    const sessions = new Sessions(deps.store, deps.config.dashboard.sessionHours * 3_600_000, deps.config.dashboard.maxSessionsPerAccount);
    const auth = apiAuthentication(deps.keys, logins, guard, deps.config.limits.managementApi, sessions, deps.store, shared);
    openApiRoute(api);
    await api.register(sessionRoutes, { accounts: deps.accounts, team: deps.team, logins, sessions, guard, authenticate: auth.account, sessionsPerAddress: { perMinute: sessionsPerMinute, burst: sessionBurst }, shared });
    await api.register(accountRoutes, { accounts: deps.accounts, authenticate: auth.account, flushLastUsed: () => deps.keys.flushLastUsed() });
    await api.register(teamRoutes, { team: deps.team, authenticate: auth.account });
    const mailConfigured = deps.config.mail.smtp.host !== undefined;
    await api.register(publicAccountRoutes, { team: deps.team, sessions, guard, shared, log: api.log, mailConfigured });
    await api.register(alertRoutes, { alerts: deps.store.alerts, authenticate: auth.account, mailConfigured });
    if (deps.webhooks) {
      await api.register(webhookRoutes, {
        store: deps.store, networks: deps.networks, authenticate: auth.webhooks, allowPrivateTargets: deps.config.webhooks.allowPrivateTargets,
        resolve: deps.webhooks.resolve, written: deps.webhooks.written, changed: deps.webhooks.changed,
      });
    }
    await api.register(analyticsRoutes, {
      store: deps.store, accounts: deps.accounts, networks: deps.networks, usage: deps.usage, authenticate: auth.analytics, operator: auth.operator,
      flushQuota: async () => deps.limits?.flushUsage(),
      bounds: deps.config.analytics,
      baseUrl: (req) => `${req.protocol}://${req.host}`,
    });
    await api.register(requestRoutes, { store: deps.store, requests: deps.requests, authenticate: auth.analytics, operator: auth.operator });
    await api.register(operatorRoutes, { prefix: '/operator', accounts: deps.accounts, team: deps.team, authenticate: auth.operator });
  }, { prefix: API_PREFIX });
}
