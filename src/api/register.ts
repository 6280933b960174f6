import type { FastifyInstance } from 'fastify';
import type { AccountsService } from '../accounts/service.ts';
import type { KeyResolver } from '../auth/key-resolver.ts';
import { UnknownKeyGuard } from '../auth/unknown-key-guard.ts';
import type { Config } from '../config/schema.ts';
import type { Store } from '../store/store.ts';
import { accountRoutes } from './account-routes.ts';
import { apiAuthentication } from './auth.ts';
import { useJsonBodies } from './body.ts';
import { ApiError, handleApiError, sendApiError } from './errors.ts';
import { openApiRoute, registerOpenApi } from './openapi.ts';
import { operatorRoutes } from './operator-routes.ts';
import { PasswordLogins } from './password-login.ts';
import { SHARED_SCHEMAS } from './schemas.ts';

export const API_PREFIX = '/api/v1';

/**
 * The management REST API (`/api/v1`, JSON), in its own fastify context: JSON bodies checked by schema, its own
 * error shape and 404, and an OpenAPI document of exactly these routes (the JSON-RPC endpoint is outside this
 * context, so it is not in it). See docs/api.md.
 */
export function registerApi(app: FastifyInstance, deps: { config: Readonly<Config>; accounts: AccountsService; keys: KeyResolver; store: Store }): void {
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
    api.setErrorHandler(handleApiError);
    api.setNotFoundHandler((req, reply) =>
      sendApiError(reply, new ApiError(404, 'not_found', `no route ${req.method} here; the routes are in ${API_PREFIX}/openapi.json`)));

    const { perSecond, burst } = deps.config.limits.unknownKeys;
    const auth = apiAuthentication(deps.keys, new PasswordLogins(deps.store), new UnknownKeyGuard(perSecond, burst), deps.config.limits.managementApi);
    openApiRoute(api);
    await api.register(accountRoutes, { accounts: deps.accounts, authenticate: auth.account });
    await api.register(operatorRoutes, { prefix: '/operator', accounts: deps.accounts, authenticate: auth.operator });
  }, { prefix: API_PREFIX });
}
