import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AccountsService } from '../accounts/service.ts';
import type { UsageRecorder } from '../analytics/usage-recorder.ts';
import { minuteOf } from '../store/minute.ts';
import { UsageReport, type Bucket } from '../analytics/report.ts';
import { UsageCsv } from '../analytics/usage-csv.ts';
import { readUsageRows, TooManyUsageRowsError, UsageReadGate, UsageReadTimeoutError, withinBound } from '../analytics/read-usage.ts';
import type { Networks } from '../networks/networks.ts';
import { monthOf } from '../limits/quota.ts';
import { EVERYONE, grainStart, type UsageStatus, type UsageStore } from '../store/usage/usage-store.ts';
import { ApiError } from './errors.ts';
import { errorResponses } from './schemas.ts';
import type { KeyStore } from '../store/keys/key-store.ts';
import type { WebhookStore } from '../store/webhooks/webhook-store.ts';
import type { WebhookEventStore } from '../store/webhooks/webhook-event-store.ts';

const member: Record<string, string[]>[] = [{ session: [] }, { apiKey: [] }];
const operator: Record<string, string[]>[] = [{ session: [] }, { apiKey: [] }, { operatorPassword: [] }];

type Query = { Querystring: { from?: string; to?: string; bucket?: string; keyId?: string; network?: string; method?: string; status?: string; accountId?: string } };

const query = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'string', description: 'ISO time (default: an hour ago)' },
    to: { type: 'string', description: 'ISO time (default: now)' },
    bucket: { enum: ['minute', 'hour', 'day'], description: 'default: by the range (minutes up to 3 hours, hours up to 3 days)' },
    keyId: { type: 'string' },
    network: { type: 'string' },
    method: { type: 'string', maxLength: 128, description: 'one method, as recorded (`(refused)`: refused before the body was read; `(invalid)`, `(other)`)' },
    status: { type: 'string', maxLength: 12, description: '`ok` (answered with a result), `error` (any error), or one code: a JSON-RPC error code such as -32005 (limits), -32010 (key), -32011 (forbidden), -32012 (unknown network)' },
    accountId: { type: 'string', description: 'operator only: one account (default: all)' },
  },
} as const;

/** How long one analytics query may wait for its pages before it is refused (429), ms. */
const QUERY_DEADLINE_MS = 30_000;
/** Accounts the operator's report of everyone lists, most requests first. */
const TOP_ACCOUNTS = 100;

/** [from, to) as minutes, and the bucket; refuses what cannot be read, spans too long or would be too many buckets. */
function range(q: Query['Querystring'], maxRangeDays: number): { from: string; to: string; bucket: Bucket } {
  const now = Date.now();
  const parse = (v: string | undefined, fallback: number, name: string) => {
    if (v === undefined) return fallback;
    const t = Date.parse(v);
    if (Number.isNaN(t)) throw new ApiError(400, 'validation_failed', `${name} is not a time (ISO 8601, e.g. 2026-11-23T10:00:00Z)`, name);
    return t;
  };
  const to = parse(q.to, now + 60_000, 'to');
  const from = parse(q.from, now - 3_600_000, 'from');
  if (from >= to) throw new ApiError(400, 'validation_failed', 'from must be before to', 'from');
  const span = to - from;
  if (span > maxRangeDays * 86_400_000) throw new ApiError(400, 'validation_failed', `the range spans more than ${maxRangeDays} days (analytics.maxRangeDays); choose a shorter one`, 'from');
  const bucket = (q.bucket as Bucket | undefined) ?? (span <= 3 * 3_600_000 ? 'minute' : span <= 3 * 86_400_000 ? 'hour' : 'day');
  const step = bucket === 'minute' ? 60_000 : bucket === 'hour' ? 3_600_000 : 86_400_000;
  if (span / step > 1500) throw new ApiError(400, 'validation_failed', `too many ${bucket}s in the range (at most 1500); choose a larger bucket`, 'bucket');
  // Hours and days are read whole, from the rows kept at their grain: the first bucket starts at its own start.
  return { from: grainStart(minuteOf(from), bucket), to: minuteOf(to), bucket };
}

/** The outcome filter: `ok`, `error`, or one code (HTTP statuses are not what rows keep: -32005 is the 429). */
function statusOf(v: string | undefined): UsageStatus | undefined {
  if (v === undefined || v === 'ok' || v === 'error') return v;
  if (/^-?\d{1,6}$/.test(v)) return Number(v);
  throw new ApiError(400, 'validation_failed', 'status must be ok, error, or an error code such as -32005', 'status');
}

/** The CSV's file name: the range's minutes without colons (some systems refuse them in file names). */
const csvName = (from: string, to: string) => `nodegate-usage-${from.replace(/:/g, '')}-${to.replace(/:/g, '')}.csv`;

interface Opts {
  store: { keys: KeyStore; usage: UsageStore; webhooks: WebhookStore; webhookEvents: WebhookEventStore };
  accounts: AccountsService;
  networks: Networks;
  usage: UsageRecorder | undefined;
  /** The analytics bounds: range, rows read per query. */
  bounds: { maxRangeDays: number; maxRowsPerQuery: number };
  /** Writes this instance's pending compute units, so the quota used is exact for what it answered. */
  flushQuota: () => Promise<void>;
  /** Session, or a key with `analytics`. */
  authenticate: onRequestAsyncHookHandler;
  /** Session or key of an operator. */
  operator: onRequestAsyncHookHandler;
  /** The public base URL of the RPC endpoint, as callers reach it. */
  baseUrl: (req: FastifyRequest) => string;
}

/**
 * Usage analytics (docs/decisions.md §10): `GET /analytics` for the calling account (time series, breakdowns by method,
 * key, network and outcome, latency, the quota used this month); `GET /operator/analytics` for everyone or one
 * account. Reads what this instance recorded so far first (its last seconds are not yet in the store otherwise).
 * Also `GET /networks` (the endpoints a member may call) and `GET /operator/networks` (with upstream health).
 */
export async function analyticsRoutes(api: FastifyInstance, opts: Opts) {
  const { store, accounts, networks, usage } = opts;
  // Every query of this instance reads its rows in pages through one gate: together they take a bounded share of
  // the event loop, and each at most `maxRowsPerQuery` rows.
  const gate = new UsageReadGate();
  /** The query of the rows a request selects: its range at its buckets' grain, its account and filters. */
  const queryOf = (q: Query['Querystring'], accountId: string | undefined) => {
    const r = range(q, opts.bounds.maxRangeDays);
    // The rows of the buckets' grain: a month by days reads 31 rows a cell, not 44,640.
    return { r, query: { grain: r.bucket, from: r.from, to: r.to, accountId, keyId: q.keyId, network: q.network, method: q.method, status: statusOf(q.status) } };
  };
  /** A bounded read of the store: refusals as the API answers them. */
  const bounded = async <T>(read: (o: { maxRows: number; gate: UsageReadGate; deadline: number }) => Promise<T>): Promise<T> => {
    await usage?.flush();
    try {
      return await read({ maxRows: opts.bounds.maxRowsPerQuery, gate, deadline: performance.now() + QUERY_DEADLINE_MS });
    } catch (err) {
      if (err instanceof TooManyUsageRowsError) throw new ApiError(400, 'validation_failed', err.message, 'from');
      if (err instanceof UsageReadTimeoutError) throw new ApiError(429, 'too_many_requests', err.message, undefined, { 'retry-after': '5' });
      throw err;
    }
  };
  const read = async (q: Query['Querystring'], accountId: string | undefined) => {
    // Everyone's usage (the operator, no account or key chosen) is read from the rows that add up every account's
    // calls, and its accounts are the top ones the database added up: neither reads every account's rows.
    const everyone = accountId === undefined && q.keyId === undefined;
    const { r, query } = queryOf(q, everyone ? EVERYONE : accountId);
    const report = new UsageReport(r.from, r.to, r.bucket);
    const { accountId: _, ...all } = query;
    // Both statements at once: the database adds up on two connections while the event loop waits for both.
    const [groups, top] = await bounded((o) => withinBound(store.usage, query, o, () => Promise.all([
      store.usage.summarizeUsage(query), everyone ? store.usage.topAccounts(all, TOP_ACCOUNTS) : undefined,
    ])));
    report.addGroups(groups);
    if (top) report.setAccounts(top);
    return report.result();
  };
  /** The CSV export: the same rows as the JSON report, one line per bucket, key, network, method and code. */
  const csv = async (q: Query['Querystring'], accountId: string | undefined, reply: FastifyReply) => {
    const { r, query } = queryOf(q, accountId);
    const out = new UsageCsv(r.bucket);
    await bounded((o) => readUsageRows(store.usage, query, o, (row) => out.add(row)));
    const names = new Map<string, string>();
    for (const id of out.keyIds()) {
      const k = id.startsWith('(') ? undefined : await store.keys.getKey(id);
      if (k && (accountId === undefined || k.accountId === accountId)) names.set(id, k.name);
    }
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${csvName(r.from, r.to)}"`).send(out.text(names));
  };
  const quota = async (accountId: string) => {
    const account = await accounts.getAccount(accountId);
    const plan = await accounts.getPlan(account.planId);
    const month = monthOf(Date.now());
    await opts.flushQuota();
    return { month, used: await store.usage.getUsage(accountId, month), limit: plan.cuPerMonth, plan: plan.id };
  };
  // Webhooks in numbers: each webhook with its outbox's counts (all instances: the outbox is the store's).
  const webhookReport = async (accountId: string | undefined) => {
    const [hooks, stats] = await Promise.all([store.webhooks.listWebhooks(accountId), store.webhookEvents.webhookStats(accountId)]);
    const by = new Map(stats.map((x) => [x.webhookId, x]));
    return {
      webhooks: hooks.map((w) => ({
        webhookId: w.id, accountId: w.accountId, network: w.network || null, kind: w.kind, url: w.url, status: w.status,
        ...(by.get(w.id) ?? { events: 0, delivered: 0, pending: 0, attempts: 0, failedAttempts: 0, oldestPendingAt: null, meanDeliveryMs: null }),
      })),
    };
  };
  const endpoints = (req: FastifyRequest) => networks.list.map((n) => ({
    name: n.name, chainId: n.chainId, kind: n.kind, aliases: networks.aliasesOf(n), url: `${opts.baseUrl(req)}/v1/${n.name}/`,
  }));

  api.register(async (m) => {
    m.addHook('onRequest', opts.authenticate);
    m.get<Query>('/analytics', { schema: { summary: "The calling account's usage", tags: ['analytics'], querystring: query, security: member, response: errorResponses(400, 401, 403) } }, async (req) => {
      if (req.query.accountId !== undefined) throw new ApiError(400, 'validation_failed', 'accountId is for the operator route', 'accountId');
      const accountId = req.principal!.account.id;
      return { ...(await read(req.query, accountId)), quota: await quota(accountId) };
    });
    m.get<Query>('/analytics.csv', { schema: { summary: "The calling account's usage as CSV: one line per bucket, key, network, method and outcome", tags: ['analytics'], querystring: query, security: member, response: errorResponses(400, 401, 403) } }, async (req, reply) => {
      if (req.query.accountId !== undefined) throw new ApiError(400, 'validation_failed', 'accountId is for the operator route', 'accountId');
      return csv(req.query, req.principal!.account.id, reply);
    });
    m.get('/analytics/webhooks', { schema: { summary: "The calling account's webhooks in numbers: events, deliveries, failed attempts, backlog, mean time to delivery", tags: ['analytics'], security: member, response: errorResponses(401, 403) } },
      async (req) => webhookReport(req.principal!.account.id));
    m.get('/networks', { schema: { summary: 'The networks and their endpoint URLs (append your key)', tags: ['analytics'], security: member, response: errorResponses(401, 403) } }, async (req) => ({ networks: endpoints(req) }));
  });

  api.register(async (op) => {
    op.addHook('onRequest', opts.operator);
    op.get<Query>('/operator/analytics', { schema: { summary: "Everyone's usage (with the 100 accounts of most requests), or one account's", tags: ['analytics'], querystring: query, security: operator, response: errorResponses(400, 401, 403) } }, async (req) => {
      const r = await read(req.query, req.query.accountId);
      return req.query.accountId ? { ...r, quota: await quota(req.query.accountId) } : r;
    });
    op.get<Query>('/operator/analytics.csv', { schema: { summary: "Everyone's usage, or one account's, as CSV", tags: ['analytics'], querystring: query, security: operator, response: errorResponses(400, 401, 403) } },
      async (req, reply) => csv(req.query, req.query.accountId, reply));
    op.get<{ Querystring: { accountId?: string } }>('/operator/analytics/webhooks', { schema: { summary: "Everyone's webhooks in numbers, or one account's", tags: ['analytics'], querystring: { type: 'object', additionalProperties: false, properties: { accountId: { type: 'string' } } }, security: operator, response: errorResponses(400, 401, 403) } },
      async (req) => webhookReport(req.query.accountId));
    op.get('/operator/networks', { schema: { summary: 'Networks with the state of each upstream', tags: ['analytics'], security: operator, response: errorResponses(401, 403) } }, async (req) => ({
      networks: endpoints(req).map((e) => ({ ...e, upstreams: networks.get(e.name)!.chain.status() })),
    }));
  });
}
