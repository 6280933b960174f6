import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { KeyResolver } from './auth/key-resolver.ts';
import { bootstrap, type BootstrapSecrets } from './accounts/bootstrap.ts';
import type { Config } from './config/schema.ts';
import { redactPath } from './http/redact.ts';
import { buildServer } from './http/server.ts';
import { AccountsService } from './accounts/service.ts';
import { accountsCatalogue } from './accounts/catalogue.ts';
import { Limits } from './limits/limits.ts';
import { openRateLimiter, type OpenedRateLimiter } from './limits/open-rate-limiter.ts';
import { QuotaTracker } from './limits/quota.ts';
import { openStore } from './store/open-store.ts';
import type { Store } from './store/store.ts';
import { Networks } from './upstream/networks.ts';
import { Filters } from './filters/filters.ts';
import { MemoryFilterStore } from './filters/memory-filter-store.ts';

export interface Gateway {
  config: Readonly<Config>;
  app: FastifyInstance;
  store: Store;
  networks: Networks;
  keys: KeyResolver;
  accounts: AccountsService;
  rateLimiter: OpenedRateLimiter;
  log: Logger;
  /** Secrets created by this start (first start only), to print once. */
  secrets: BootstrapSecrets;
  /** The listening base URL, `http://127.0.0.1:PORT`. */
  url: string;
  /** Graceful stop: no new requests, in-flight ones finish, chains snapshotted and stopped, store closed. */
  close(): Promise<void>;
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
export async function startGateway(config: Readonly<Config>, opts: { log?: Logger } = {}): Promise<Gateway> {
  const log = opts.log ?? createLogger(config);
  const store = await openStore(config);
  const filterStore = new MemoryFilterStore();
  const networks = new Networks(config, log, new Filters(filterStore, config.filters.idleTimeoutMs, Date.now, config.filters.maxKeptBytes));
  const keys = new KeyResolver(store, config.auth.keyCacheTtlMs, config.auth.lastUsedFlushMs);
  const accounts = new AccountsService(store, accountsCatalogue(config), () => keys.invalidate());
  const rateLimiter = await openRateLimiter({ redisUrl: config.limits.redisUrl, timeoutMs: config.limits.redisTimeoutMs, log });
  const quota = new QuotaTracker(store, config.limits.usageFlushMs, log);
  const limits = config.limits.enabled ? new Limits(config, rateLimiter, quota) : undefined;
  let app: FastifyInstance | undefined;
  try {
    await networks.start();
    const secrets = await bootstrap(store, accounts, config);
    app = buildServer({ config, log, networks, keys, store, accounts, limits, rateLimiter });
    await app.listen({ host: config.server.host, port: config.server.port });
    const { port } = app.server.address() as { port: number };
    const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
    const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
    let closing: Promise<void> | undefined;
    const server = app;
    const close = () => (closing ??= (async () => {
      await server.close();
      await keys.close();
      await quota.close();
      await rateLimiter.close();
      await networks.close();
      await filterStore.close();
      await store.close();
    })());
    return { config, app, store, networks, keys, accounts, rateLimiter, log, secrets, url, close };
  } catch (err) {
    await app?.close().catch(() => {});
    await keys.close();
    await quota.close().catch(() => {});
    await rateLimiter.close();
    await networks.close().catch(() => {});
    await filterStore.close();
    await store.close();
    throw err;
  }
}
