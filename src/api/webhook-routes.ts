import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Networks } from '../networks/networks.ts';
import { DEFAULT_MAX_WEBHOOKS, type Store, type Webhook } from '../store/store.ts';
import { WEBHOOK_KINDS } from '../webhooks/producer.ts';
import { checkTarget, TargetRefused, type Resolve } from '../webhooks/target-guard.ts';
import { ApiError } from './errors.ts';
import { errorResponses } from './schemas.ts';

type Id = { Params: { id: string } };
const tags = ['webhooks'];
const security: Record<string, string[]>[] = [{ session: [] }, { apiKey: [] }];

interface Opts {
  store: Store;
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
/** A webhook as the API shows it: never its secret (shown only when made or rotated). */
const shown = ({ secret: _s, ...w }: Webhook) => w;

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
  const mine = async (req: FastifyRequest<Id>) => {
    const w = await store.getWebhook(req.params.id);
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
    const net = network && networks.get(network);
    if (!net) throw new ApiError(400, 'validation_failed', `network must be one of ${networks.list.map((n) => n.name).join(', ')}`, 'network');
    if (!kind || !(WEBHOOK_KINDS as readonly string[]).includes(kind)) throw new ApiError(400, 'validation_failed', `kind must be one of ${WEBHOOK_KINDS.join(', ')}`, 'kind');
    const watch = kind === 'address.activity' ? 'addresses' : kind === 'transaction.mined' ? 'hashes' : undefined;
    const list = watch && (options as Record<string, unknown>)[watch];
    if (watch && (!Array.isArray(list) || list.length === 0 || list.length > 1000 || !list.every((x) => typeof x === 'string' && /^0x[0-9a-fA-F]+$/.test(x)))) {
      throw new ApiError(400, 'validation_failed', `a ${kind} webhook needs options.${watch}: 1 to 1,000 hex strings`, 'options');
    }
    if (!url) throw new ApiError(400, 'validation_failed', 'url is required', 'url');
    // Each webhook is work on every block for the producer and the deliverer: the plan says how many an account has.
    // One creation at a time per account on this instance, so parallel requests cannot pass the cap together.
    const account = req.principal!.account;
    const checked = await target(url);
    const w = await oneAtATime(account.id, async () => {
      const max = (await store.getPlan(account.planId))?.maxWebhooks ?? DEFAULT_MAX_WEBHOOKS;
      if ((await store.listWebhooks(account.id)).length >= max) {
        throw new ApiError(409, 'conflict', `the account already has ${max} webhooks (the most its plan allows); delete one first`);
      }
      return store.createWebhook({ id: randomUUID(), accountId: account.id, network: net.name, kind, url: checked, options, secret: newSecret(), status: 'active' });
    });
    await opts.changed(); // listening to the network's chain before the answer: no block after it is missed
    return reply.code(201).send({ ...shown(w), secret: w.secret });
  });

  api.get('/webhooks', { schema: { summary: "The account's webhooks", tags, security, response: errorResponses(401, 403) } },
    async (req) => ({ webhooks: (await store.listWebhooks(req.principal!.account.id)).map(shown) }));
  api.get<Id>('/webhooks/:id', { schema: { summary: 'One webhook', tags, security, response: errorResponses(401, 403, 404) } }, async (req) => shown(await mine(req)));
  api.patch<Id & { Body: { url?: string; options?: Record<string, unknown> } }>('/webhooks/:id', {
    schema: { summary: "Change a webhook's target or options", tags, security, body, response: errorResponses(400, 401, 403, 404) },
  }, async (req) => {
    await mine(req);
    const url = req.body.url === undefined ? undefined : await target(req.body.url);
    const w = (await store.updateWebhook(req.params.id, { url, options: req.body.options }))!;
    await opts.changed(); // the producer's list of webhooks is read again: the next block uses the new options
    return shown(w);
  });
  api.post<Id>('/webhooks/:id/pause', { schema: { summary: 'Pause deliveries (events are kept)', tags, security, response: errorResponses(401, 403, 404) } },
    async (req) => { await mine(req); return shown((await store.updateWebhook(req.params.id, { status: 'paused' }))!); });
  api.post<Id>('/webhooks/:id/resume', { schema: { summary: 'Resume deliveries (also of a disabled webhook)', tags, security, response: errorResponses(401, 403, 404) } },
    async (req) => { await mine(req); const w = await store.updateWebhook(req.params.id, { status: 'active', disabledReason: null }); opts.written(); await opts.changed(); return shown(w!); });
  api.post<Id>('/webhooks/:id/rotate-secret', { schema: { summary: 'A new signing secret, shown in this response only', tags, security, response: errorResponses(401, 403, 404) } },
    async (req) => { await mine(req); const w = (await store.updateWebhook(req.params.id, { secret: newSecret() }))!; return { ...shown(w), secret: w.secret }; });
  api.post<Id>('/webhooks/:id/test', { schema: { summary: 'Send a test event', tags, security, response: errorResponses(401, 403, 404) } }, async (req, reply) => {
    const w = await mine(req);
    const id = `evt_test_${randomUUID().replace(/-/g, '')}`;
    const createdAt = new Date().toISOString();
    await store.addWebhookEvents([{ id, webhookId: w.id, type: 'webhook.test', createdAt, body: JSON.stringify({ id, webhookId: w.id, type: 'webhook.test', network: w.network, createdAt, event: {} }) }]);
    opts.written();
    return reply.code(202).send({ id });
  });
  api.get<Id & { Querystring: { limit?: string } }>('/webhooks/:id/deliveries', { schema: { summary: "A webhook's events, newest first, with their deliveries", tags, security, response: errorResponses(401, 403, 404) } }, async (req) => {
    await mine(req);
    const limit = Math.min(500, Math.max(1, Number(req.query.limit ?? 100) || 100));
    return { deliveries: (await store.listWebhookEvents(req.params.id, limit)).map(({ body: _b, ...e }) => e) };
  });
  api.delete<Id>('/webhooks/:id', { schema: { summary: 'Delete a webhook and its undelivered events', tags, security, response: errorResponses(401, 403, 404) } },
    async (req, reply) => { await mine(req); await store.deleteWebhook(req.params.id); await opts.changed(); return reply.code(204).send(); });
}
