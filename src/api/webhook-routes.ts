import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Networks } from '../networks/networks.ts';
import { DEFAULT_MAX_WEBHOOKS, type PlanStore } from '../store/plans/plan-store.ts';
import type { Webhook, WebhookStore } from '../store/webhooks/webhook-store.ts';
import type { WebhookEvent, WebhookEventStore } from '../store/webhooks/webhook-event-store.ts';
import { ACCOUNT_KINDS, WEBHOOK_KINDS } from '../webhooks/producer.ts';
import { checkOptions } from '../webhooks/webhook-options.ts';
import { checkTarget, TargetRefused, type Resolve } from '../webhooks/target-guard.ts';
import { ApiError } from './errors.ts';
import { errorResponses } from './schemas.ts';

type Id = { Params: { id: string } };
type EventOf = { Params: { id: string; eventId: string } };
const tags = ['webhooks'];
const security: Record<string, string[]>[] = [{ session: [] }, { apiKey: [] }];

interface Opts {
  store: { plans: PlanStore; webhooks: WebhookStore; webhookEvents: WebhookEventStore };
  networks: Networks;
  authenticate: onRequestAsyncHookHandler;
  allowPrivateTargets: boolean;
  resolve: Resolve;
  /** New events were written (a test event): deliver now. */
  written: () => void;
  /** Webhooks were made, changed, resumed or deleted: the producer reads them again, and listens to the chains that have some. */
  changed: () => Promise<void>;
}

const newSecret = () => `whsec_${randomBytes(24).toString('base64url')}`;
/** A webhook as the API shows it: never its secret (shown only when made or rotated); `network` null for an account kind without one. */
const shown = ({ secret: _s, ...w }: Webhook) => ({ ...w, network: w.network || null });
/** Most events one read of the deliveries shows (`?limit=`). */
const DELIVERIES_MAX = 500;

/**
 * One event of the outbox as the deliveries view shows it: what was sent, when it goes next, and what the
 * last attempt came to. `id`, `status`, `lastStatus` and `lastError` are the earlier shape, kept for clients.
 */
const delivery = (e: WebhookEvent) => ({
  eventId: e.id, type: e.type, status: e.status, createdAt: e.createdAt, deliveredAt: e.deliveredAt, attempts: e.attempts,
  nextAttemptAt: e.status === 'delivered' ? null : e.nextAttemptAt,
  payload: JSON.parse(e.body) as unknown,
  lastAttempt: e.attempts === 0 ? null : { at: e.lastAttemptAt, status: e.lastStatus, durationMs: e.lastDurationMs, error: e.lastError, responseBody: e.lastResponse },
  id: e.id, lastStatus: e.lastStatus, lastError: e.lastError,
});

/** A kind's options, or 400 naming the field at fault (`options.addresses[0]`). */
const validOptions = (kind: string, options: Record<string, unknown>) => {
  const problem = checkOptions(kind, options);
  if (problem) throw new ApiError(400, 'validation_failed', problem.message, problem.field);
  return options;
};

const body = {
  type: 'object',
  additionalProperties: false,
  properties: {
    network: { type: 'string', maxLength: 64 },
    kind: { type: 'string', maxLength: 64 },
    url: { type: 'string', maxLength: 2048 },
    options: { type: 'object', additionalProperties: true, maxProperties: 8 },
  },
} as const;

/**
 * `/api/v1/webhooks` (docs/decisions.md §10): the session or a key with `webhooks`. Create (the signing secret shown once),
 * list, read, change, pause, resume, delete, rotate the secret, send a test event, and the deliveries. A target is
 * checked when set (http or https; a public address unless `webhooks.allowPrivateTargets`) and again at each delivery.
 */
export async function webhookRoutes(api: FastifyInstance, opts: Opts) {
  const { store, networks } = opts;
  /** Webhook creations in progress per account (an entry lives only while one runs). */
  const creating = new Map<string, Promise<unknown>>();
  const oneAtATime = <T>(accountId: string, work: () => Promise<T>): Promise<T> => {
    const run = (creating.get(accountId) ?? Promise.resolve()).catch(() => {}).then(work);
    creating.set(accountId, run);
    return run.finally(() => { if (creating.get(accountId) === run) creating.delete(accountId); });
  };
  api.addHook('onRequest', opts.authenticate);
  // Roles (accounts/roles.ts): the "developer or owner" check for every change below (create, patch, pause,
  // resume, delete, secret, test, redeliver) belongs here, as one preHandler on the non-GET routes of this plugin.
  const mine = async (req: FastifyRequest<Id>) => {
    const w = await store.webhooks.getWebhook(req.params.id);
    if (!w || w.accountId !== req.principal!.account.id) throw new ApiError(404, 'not_found', 'webhook not found');
    return w;
  };
  const target = async (url: string) => {
    try {
      return (await checkTarget(url, { allowPrivate: opts.allowPrivateTargets, resolve: opts.resolve })).toString();
    } catch (err) {
      if (err instanceof TargetRefused) throw new ApiError(400, 'validation_failed', err.message, 'url');
      throw err;
    }
  };

  api.post<{ Body: { network?: string; kind?: string; url?: string; options?: Record<string, unknown> } }>('/webhooks', {
    schema: { summary: "Create a webhook; its signing secret is in this response only (409 past the plan's maxWebhooks)", tags, security, body, response: errorResponses(400, 401, 403, 409) },
  }, async (req, reply) => {
    const { network, kind, url, options = {} } = req.body;
    // An account kind (usage.threshold) needs no network; a chain kind needs one this gateway serves.
    const net = network ? networks.get(network) : undefined;
    if (!net && (network || !kind || !ACCOUNT_KINDS.has(kind))) {
      throw new ApiError(400, 'validation_failed', `network must be one of ${networks.list.map((n) => n.name).join(', ')}`, 'network');
    }
    if (!kind || !(WEBHOOK_KINDS as readonly string[]).includes(kind)) throw new ApiError(400, 'validation_failed', `kind must be one of ${WEBHOOK_KINDS.join(', ')}`, 'kind');
    validOptions(kind, options);
    if (!url) throw new ApiError(400, 'validation_failed', 'url is required', 'url');
    // Each webhook is work on every block for the producer and the deliverer: the plan says how many an account has.
    // One creation at a time per account on this instance, so parallel requests cannot pass the cap together.
    const account = req.principal!.account;
    const checked = await target(url);
    const w = await oneAtATime(account.id, async () => {
      const max = (await store.plans.getPlan(account.planId))?.maxWebhooks ?? DEFAULT_MAX_WEBHOOKS;
      if ((await store.webhooks.listWebhooks(account.id)).length >= max) {
        throw new ApiError(409, 'conflict', `the account already has ${max} webhooks (the most its plan allows); delete one first`);
      }
      return store.webhooks.createWebhook({ id: randomUUID(), accountId: account.id, network: net?.name ?? '', kind, url: checked, options, secret: newSecret(), status: 'active' });
    });
    await opts.changed(); // listening to the network's chain before the answer: no block after it is missed
    return reply.code(201).send({ ...shown(w), secret: w.secret });
  });

  api.get('/webhooks', { schema: { summary: "The account's webhooks", tags, security, response: errorResponses(401, 403) } },
    async (req) => ({ webhooks: (await store.webhooks.listWebhooks(req.principal!.account.id)).map(shown) }));
  api.get<Id>('/webhooks/:id', { schema: { summary: 'One webhook', tags, security, response: errorResponses(401, 403, 404) } }, async (req) => shown(await mine(req)));
  api.patch<Id & { Body: { url?: string; options?: Record<string, unknown> } }>('/webhooks/:id', {
    schema: { summary: "Change a webhook's target or options", tags, security, body, response: errorResponses(400, 401, 403, 404) },
  }, async (req) => {
    const { kind } = await mine(req);
    const options = req.body.options === undefined ? undefined : validOptions(kind, req.body.options);
    const url = req.body.url === undefined ? undefined : await target(req.body.url);
    const w = (await store.webhooks.updateWebhook(req.params.id, { url, options }))!;
    await opts.changed(); // the producer's list of webhooks is read again: the next block uses the new options
    return shown(w);
  });
  api.post<Id>('/webhooks/:id/pause', { schema: { summary: 'Pause deliveries (events are kept)', tags, security, response: errorResponses(401, 403, 404) } },
    async (req) => { await mine(req); return shown((await store.webhooks.updateWebhook(req.params.id, { status: 'paused' }))!); });
  api.post<Id>('/webhooks/:id/resume', { schema: { summary: 'Resume deliveries (also of a disabled webhook)', tags, security, response: errorResponses(401, 403, 404) } },
    async (req) => { await mine(req); const w = await store.webhooks.updateWebhook(req.params.id, { status: 'active', disabledReason: null }); opts.written(); await opts.changed(); return shown(w!); });
  api.post<Id>('/webhooks/:id/rotate-secret', { schema: { summary: 'A new signing secret, shown in this response only (with the webhook)', tags, security, response: errorResponses(401, 403, 404) } },
    async (req) => { await mine(req); const w = (await store.webhooks.updateWebhook(req.params.id, { secret: newSecret() }))!; return { ...shown(w), secret: w.secret }; });
  // The route that only rotates: the answer is the secret alone. Each attempt reads the webhook's secret as it
  // starts, so every attempt after this answer is signed with the new one and none with the old.
  api.post<Id>('/webhooks/:id/secret', { schema: { summary: 'A new signing secret, shown in this response only; the old one signs nothing more', tags, security, response: errorResponses(401, 403, 404) } },
    async (req) => { await mine(req); return { secret: (await store.webhooks.updateWebhook(req.params.id, { secret: newSecret() }))!.secret }; });
  api.post<Id>('/webhooks/:id/test', { schema: { summary: 'Send a test event', tags, security, response: errorResponses(401, 403, 404) } }, async (req, reply) => {
    const w = await mine(req);
    const id = `evt_test_${randomUUID().replace(/-/g, '')}`;
    const createdAt = new Date().toISOString();
    await store.webhookEvents.addWebhookEvents([{ id, webhookId: w.id, type: 'webhook.test', createdAt, body: JSON.stringify({ id, webhookId: w.id, type: 'webhook.test', network: w.network || null, createdAt, event: {} }) }]);
    opts.written();
    return reply.code(202).send({ id });
  });
  api.get<Id & { Querystring: { limit?: string } }>('/webhooks/:id/deliveries', {
    schema: { summary: "A webhook's events, newest first: payload, attempts, next attempt, and the last attempt with the start of the receiver's answer", tags, security, response: errorResponses(401, 403, 404) },
  }, async (req) => {
    await mine(req);
    const limit = Math.min(DELIVERIES_MAX, Math.max(1, Number(req.query.limit ?? 100) || 100));
    return { deliveries: (await store.webhookEvents.listWebhookEvents(req.params.id, limit)).map(delivery) };
  });
  api.post<EventOf>('/webhooks/:id/deliveries/:eventId/redeliver', {
    schema: { summary: 'Send an event again: a new copy queued after the webhook\'s other events (the old record stays)', tags, security, response: errorResponses(401, 403, 404) },
  }, async (req, reply) => {
    const w = await mine(req);
    const [e] = await store.webhookEvents.getWebhookEvents([req.params.eventId]);
    if (!e || e.webhookId !== w.id) throw new ApiError(404, 'not_found', 'event not found (delivered events leave after webhooks.retentionDays)');
    // The same body (its `id` is the event's, for receivers that deduplicate); the copy has an id of its own, sent
    // as Nodegate-Event-Id, and is written now (its 24 hours of retries count from the redelivery).
    const eventId = `evt_re_${randomUUID().replace(/-/g, '')}`;
    await store.webhookEvents.addWebhookEvents([{ id: eventId, webhookId: w.id, type: e.type, createdAt: new Date().toISOString(), body: e.body }]);
    opts.written();
    return reply.code(202).send({ eventId });
  });
  api.delete<Id>('/webhooks/:id', { schema: { summary: 'Delete a webhook and its undelivered events', tags, security, response: errorResponses(401, 403, 404) } },
    async (req, reply) => { await mine(req); await store.webhooks.deleteWebhook(req.params.id); await opts.changed(); return reply.code(204).send(); });
}
