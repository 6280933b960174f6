import { startTracing } from './tracing/tracing.ts';
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { KeyResolver } from './auth/key-resolver.ts';
import { bootstrap, type BootstrapSecrets } from './accounts/bootstrap.ts';
import type { Config } from './config/schema.ts';
import { redactPath } from './errors/redact.ts';
import { buildServer } from './http/server.ts';
import { AccountsService } from './accounts/service.ts';
import { accountsCatalogue } from './accounts/catalogue.ts';
import { Limits } from './limits/limits.ts';
import { openSharedState, type SharedState } from './shared-state/open-shared-state.ts';
import type { OpenedRateLimiter } from './shared-state/rate-limiter/rate-limiter.ts';
import { QuotaTracker } from './limits/quota.ts';
import { openStore } from './store/open-store.ts';
import { claimChains, type ChainClaim } from './store/embedded-chain-claim.ts';
import { StoreOutage } from './store/outage.ts';
import type { Stores } from './store/stores.ts';
import { Networks } from './networks/networks.ts';
import { Filters } from './filters/filters.ts';
import { Metrics } from './analytics/metrics.ts';
import { RefusalLog } from './analytics/refusal-log.ts';
import { UsageRecorder } from './analytics/usage-recorder.ts';
import { RequestLog } from './analytics/request-log.ts';
import { Retention } from './store/retention.ts';
import { WebhookDelivery, type DeliveryOptions } from './webhooks/delivery.ts';
import { Pacer } from './background/pacer.ts';
import { WebhookProducer } from './webhooks/producer.ts';
import { systemResolve } from './webhooks/target-guard.ts';
import type { MailQueue } from './mail/mail-queue.ts';
import { MailOutbox } from './mail/outbox.ts';
import { MailSender, smtpTransport, type MailTransport } from './mail/sender.ts';
import { TeamService, teamOptions } from './accounts/team.ts';
import { invitationBounds } from './accounts/invitation-bounds.ts';
import { AlertChecker } from './alerts/alert-checker.ts';
import { turnNow } from './background/turn-clock.ts';
import { loginBackoffOptions } from './api/password-login.ts';

export interface Gateway {
  config: Readonly<Config>;
  app: FastifyInstance;
  store: Stores;
  networks: Networks;
  keys: KeyResolver;
  accounts: AccountsService;
  /** Members, invitations, sign-up and password resets. */
  team: TeamService;
  /**
   * Mail: the outbox every module that sends mail is given (invitations, resets, usage alerts);
   * `configured` false without mail.smtp.host.
   */
  mail: MailQueue;
  rateLimiter: OpenedRateLimiter;
  log: Logger;
  /** Secrets created by this start (first start only), to print once. */
  secrets: BootstrapSecrets;
  /** Limit refusals, summarised per key and written each minute (`flush` writes them now). */
  refusals: RefusalLog;
  /** Webhooks' outbox writer and deliverer; absent when `webhooks.enabled` is false. */
  webhooks: { producer: WebhookProducer; delivery: WebhookDelivery } | undefined;
  /** Store retention (sessions, revoked keys, test events, usage roll-up), run at start and hourly (the roll-up every 5 minutes too); `poke()` runs it now. */
  retention: Retention;
  /** Usage alerts' background check; absent when `alerts.enabled` is false. `check()` runs a round now. */
  alerts: AlertChecker | undefined;
  /** The listening base URL, `http://127.0.0.1:PORT`. */
  url: string;
  /**
   * Closes the listener only: connections already open are served as before (keep-alive included). A worker of
   * `--workers N` calls it first, so that no client is told to reconnect while another worker still takes
   * connections on the shared port (workers/primary.ts).
   */
  stopAccepting(): void;
  /**
   * Graceful stop: no new connections; every request read is answered, with `Connection: close`; idle keep-alive
   * connections are closed once quiet (http/drain.ts); then chains journalled and stopped, store closed.
   */
  close(): Promise<void>;
}

/**
 * What a worker of `nodegate start --workers N` shares with the others through the primary (workers/): used instead
 * of this process's memory (or Redis), and the embedded chains the primary runs, by URL.
 */
/** An embedded chain as a worker reaches it: the primary's chain server's URL for it, and the headers it asks. */
export interface EmbeddedAt { url: string; headers: Readonly<Record<string, string>> }

export interface WorkerShare {
  /** The state the workers share, kept by the primary (openSharedState with the worker's client of it). */
  shared: SharedState;
  /** Where the primary serves an embedded chain, and the headers its chain server asks of each call (its secret). */
  embeddedAt(network: string): EmbeddedAt;
}

/** Logs never hold a key: URLs are redacted by the serializer, and known secret fields by pino's redaction. */
export function createLogger(config: Readonly<Config>, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.log.level,
      base: undefined,
      redact: { paths: ['apikey', 'key', 'value', 'password', '*.apikey', '*.password', 'req.headers.authorization'], censor: '[redacted]' },
      serializers: { req: (req: { method?: string; url?: string }) => ({ method: req.method, url: req.url && redactPath(req.url) }) },
    },
    destination,
  );
}

/** The composition root: builds every part from the configuration, starts the chains, and listens. */
export async function startGateway(config: Readonly<Config>, opts: {
  log?: Logger;
  /** Webhooks' view of the network: DNS answers and a spy told of each connection before it opens (tests). */
  webhookNet?: Pick<DeliveryOptions, 'resolve' | 'onConnect' | 'route'>;
  /** A worker of `--workers N`: the state the workers share, kept by the primary. */
  worker?: WorkerShare;
  /** How mail leaves (tests); default SMTP as configured in `mail.smtp`. */
  mailTransport?: MailTransport;
  /** Where mail goes instead of the store's outbox (tests that only count what would be mailed). */
  mail?: MailQueue;
} = {}): Promise<Gateway> {
  const log = opts.log ?? createLogger(config);
  // Before the pipelines are built: they name their stages to traces only when tracing is on.
  const traces = await startTracing(config.tracing);
  const store = await openStore(config, log);
  // What this process shares with the others (limits, budgets, filters, heads, leases, login back-off): in a worker,
  // its primary's; else Redis in cluster mode (a Redis URL), or this process's memory (shared-state/).
  const worker = opts.worker;
  const tier = config.cache.enabled && config.cache.shared.enabled ? { maxBytes: config.cache.shared.maxBytes, timeoutMs: config.cache.shared.timeoutMs, prefix: config.cache.shared.redisPrefix } : undefined;
  const shared = worker?.shared ?? await openSharedState({ redisUrl: config.limits.redisUrl, redisTimeoutMs: config.limits.redisTimeoutMs, backoff: loginBackoffOptions(), log, now: turnNow, answers: tier });
  const { rateLimiter, filters: filterStore, heads } = shared;
  const filters = new Filters(filterStore, config.filters.idleTimeoutMs, Date.now, config.filters.maxKeptBytes);
  const networks = new Networks(config, log, filters, heads, worker ? (name) => worker.embeddedAt(name) : undefined, shared.answers);
  const keys = new KeyResolver(store, config.auth.keyCacheTtlMs, config.auth.lastUsedFlushMs, {
    entries: config.auth.keyCacheEntries, unknownEntries: config.auth.unknownKeyCacheEntries, followChanges: config.auth.keyCacheFollowsChanges,
    directoryKeys: config.auth.keyDirectoryKeys,
  }, {
    failStaticMs: config.auth.failStaticMs,
    storeWaitMs: config.auth.storeWaitMs,
    outage: new StoreOutage(log),
  }, turnNow);
  const accounts = new AccountsService(store, accountsCatalogue(config), () => keys.invalidate());
  const quota = new QuotaTracker(store.usage, { flushMs: config.limits.usageFlushMs, nearFlushMs: config.limits.nearQuotaFlushMs }, log, turnNow);
  const limits = config.limits.enabled ? new Limits(config, rateLimiter, quota) : undefined;
  const usage = config.analytics.enabled ? new UsageRecorder(store.usage, config.analytics.flushMs, config.analytics.maxCellsPerAccountMinute, config.analytics.maxKeysPerAccountMinute, log, turnNow) : undefined;
  const requests = config.explorer.enabled ? new RequestLog(store, config.explorer, log.child({ part: 'explorer' }), turnNow) : undefined;
  const refusals = new RefusalLog(log);
  const resolve = opts.webhookNet?.resolve ?? systemResolve;
  // Background work shares one pacer: together it takes a bounded share of the time while callers need it.
  let served = 0;
  const background = new Pacer(() => served);
  const retention = new Retention(store, config.analytics, log.child({ part: 'retention' }), background);
  const delivery = config.webhooks.enabled ? new WebhookDelivery(store, { ...config.webhooks, ...opts.webhookNet, resolve }, log.child({ part: 'webhooks' }), background) : undefined;
  const producer = delivery ? new WebhookProducer(store, networks, log.child({ part: 'webhooks' }), () => delivery.poke(), background, { perWebhook: config.webhooks.keptBytesPerWebhook, total: config.webhooks.keptBytesTotal }) : undefined;
  const metrics = config.metrics.enabled ? new Metrics(networks, () => filterStore.size, usage, delivery, { storeDown: () => keys.failStatic.outage.down, limits: () => rateLimiter.status(), keys: { held: () => keys.stats.held, readAhead: () => keys.stats.readAhead, directoryReads: () => keys.stats.directoryReads, lookups: () => keys.stats.lookups, signals: store.keys.signals?.stats } },
    () => ({ quota: quota.rowsWritten, last_use: keys.stats.lastUsesWritten, ...(usage && { usage: usage.rowsWritten }), ...(requests && { explorer: requests.stats.written }) })) : undefined;
  const webhooks = delivery && producer ? { resolve, written: () => delivery.poke(), changed: () => producer.refresh().catch(() => {}) } : undefined;
  // Mail: written to the outbox, sent by every instance's sender (leases: each message once).
  const mailConfigured = Boolean(config.mail.smtp.host);
  const sender = mailConfigured
    ? new MailSender(store.mail, opts.mailTransport ?? smtpTransport(config.mail), { from: config.mail.from, pollMs: config.mail.pollMs, timeoutMs: config.mail.smtp.timeoutMs }, log.child({ part: 'mail' }))
    : undefined;
  const mail: MailQueue = opts.mail ?? new MailOutbox(store.mail, mailConfigured, log.child({ part: 'mail' }), () => sender?.poke());
  const alerts = config.alerts.enabled ? new AlertChecker(store, log.child({ part: 'alerts' }), { checkMs: config.alerts.checkMs, mail, written: () => delivery?.poke() }) : undefined;
  // Links in mail name the configured public origin, else the address listened on (known once listening): never a
  // request's Host header, which a caller chooses.
  let listening = '';
  const team = new TeamService(store, accounts, mail, { ...teamOptions(config, () => listening), invitations: invitationBounds(shared.eventBudgets) });
  let app: FastifyInstance | undefined;
  let chainClaim: ChainClaim | undefined;
  try {
    await producer?.init();
    // A worker's chains are the primary's, claimed there.
    if (!worker) chainClaim = await claimChains(config);
    await networks.start();
    const secrets = await bootstrap(store, accounts, config);
    const built = buildServer({ config, log, networks, keys, store, accounts, team, limits, rateLimiter, usage, requests, metrics, refusals, webhooks, shared });
    app = built.app;
    // Background work yields to callers (background/pacer.ts): it looks at how many requests were served.
    if (delivery) {
      app.server.on('request', () => { served++; });
      for (const n of networks.list) n.chain.pace(background);
    }
    delivery?.start();
    retention.start();
    alerts?.start();
    await app.listen({ host: config.server.host, port: config.server.port });
    const { port } = app.server.address() as { port: number };
    const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
    const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
    listening = url;
    sender?.start();
    let closing: Promise<void> | undefined;
    const server = app;
    const drain = built.drain;
    const stopAccepting = () => { if (server.server.listening) server.server.close(); };
    const close = () => (closing ??= (async () => {
      drain.start();
      await server.close();
      drain.stop();
      await sender?.close();
      await alerts?.close();
      await producer?.settled();
      await delivery?.close();
      await keys.close();
      await quota.close();
      await usage?.close();
      await requests?.close();
      await retention.close();
      refusals.close();
      await networks.close();
      await chainClaim?.release();
      await shared.close();
      await store.close();
      await traces.shutdown();
    })());
    return { config, app, store, networks, keys, accounts, team, mail, rateLimiter, log, secrets, url, stopAccepting, close, refusals, retention, alerts, webhooks: producer && delivery ? { producer, delivery } : undefined };
  } catch (err) {
    await app?.close().catch(() => {});
    await sender?.close().catch(() => {});
    await alerts?.close();
    await delivery?.close().catch(() => {});
    await usage?.close().catch(() => {});
    await requests?.close().catch(() => {});
    await retention.close();
    refusals.close();
    await keys.close();
    await quota.close().catch(() => {});
    await networks.close().catch(() => {});
    await chainClaim?.release();
    await shared.close();
    await store.close();
    throw err;
  }
}
