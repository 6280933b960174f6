import type { Plan } from '../store/model.ts';

/**
 * The one typed configuration schema (STYLE principle 7): every field with its default and unit, validated
 * once at start-up by ajv (which also fills the defaults), then frozen and passed down.
 */
export interface EmbeddedChainConfig {
  /** EVM hardfork pinned so a chain is reproducible across anvil versions (docs/decisions.md §11). */
  hardfork: string;
  /** Genesis timestamp, seconds since the epoch; fixed so genesis hashes never change. */
  genesisTimestamp: number;
  mnemonic: string;
  /** `auto`: a block per transaction, with the watchdog; `interval`: a block every `blockTimeSeconds`. */
  mining: 'auto' | 'interval';
  blockTimeSeconds: number;
  /** No longer used: the chain journal replaced snapshots (issue 17); accepted so older configuration files load. */
  snapshotIntervalMs: number;
  /** Re-arm automine when transactions wait and no block came for this long, ms (foundry issue 10122). */
  automineWatchdogMs: number;
  /**
   * Saves nothing any more (the chain journal keeps the state at every block, issue 17); a stop's forced-exit
   * deadline is still 15 s past it, ms.
   */
  historyBudgetMs: number;
}

/** One upstream of a network (docs/decisions.md §9). */
export interface UpstreamConfig {
  /** `embedded` (an anvil Nodegate supervises; then the network's only upstream) or the URL of a node. */
  url: string;
  /** primary: takes reads by weight and every raw transaction; fallback: used when no primary is usable; dedicated: for Dedicated keys only. */
  role: 'primary' | 'fallback' | 'dedicated';
  weight: number;
  /** Per-upstream time-outs, ms; absent: rpc.timeoutMs and rpc.debugTimeoutMs. */
  timeoutMs?: number;
  debugTimeoutMs?: number;
}

export interface NetworkConfig {
  chainId: number;
  /** Shorthand for one primary upstream: `embedded` or a URL. After loading, `upstreams` is what counts. */
  upstream?: string;
  /** The network's upstreams; filled from `upstream` (or `embedded`) when not given. */
  upstreams: UpstreamConfig[];
  /** Blocks an upstream may lag the best head before it is skipped; absent: upstreams.maxLagBlocks. */
  maxLagBlocks?: number;
  /** Other names the network answers to, e.g. `devnet` for `testnet` (docs/decisions.md §2). */
  aliases: string[];
  /**
   * Blocks below the head after which an answer about a block cannot change any more (the cache keeps those for
   * ever). Absent: 0 for an embedded chain (nothing reorganises it), 64 for a node (two epochs on Ethereum).
   */
  finalityDepth?: number;
}

/** A plan as configured (docs/decisions.md §6): seeded into the store, then edited by the operator there. */
export type PlanConfig = Omit<Plan, 'id' | 'createdAt' | 'updatedAt'>;

export interface Config {
  server: {
    host: string;
    port: number;
    /** Largest accepted request body, bytes (docs/decisions.md §2). */
    bodyLimit: number;
    /**
     * Longest time a request (headers and body) may take to arrive, ms; slower ones get 408 and the connection is
     * closed, so a client trickling its body (slow loris) cannot hold a connection forever. fastify's default is none.
     */
    requestTimeoutMs: number;
    /** Peers whose X-Forwarded-For is believed (IPs or CIDRs). */
    trustedProxies: string[];
    /** Open connections at once, all clients together; past it new ones are refused. */
    maxConnections: number;
    /** Open connections at once from one client address (trusted proxies excepted); 0: no cap. */
    maxConnectionsPerIp: number;
    /** Open connections at once from one /24 (IPv4) or /64 (IPv6) (trusted proxies excepted); 0: no cap. */
    maxConnectionsPerSubnet: number;
    /**
     * Share of `maxConnections` (0-1) past which connections are under pressure: each new one closes the oldest
     * idle connection (no request in flight), and idle ones older than `pressureIdleTimeoutMs` are closed.
     */
    connectionPressure: number;
    /** Idle time-out while under pressure, ms (the usual keep-alive time-out is 72 s). */
    pressureIdleTimeoutMs: number;
  };
  /** Holds the SQLite store and the embedded chains' snapshots. */
  dataDir: string;
  networks: Record<string, NetworkConfig>;
  rpc: {
    /**
     * Hard ceiling on the items of one batch, whatever the plan says (issue 17: default 1,000 as geth, at most
     * 1,000). The key's plan `maxBatchSize` is the limit that applies; this only caps it.
     */
    maxBatchSize: number;
    /** Items of one batch in flight at once. */
    batchConcurrency: number;
    /** Drop `eth_chainId`, keeping the spec's list exactly (docs/decisions.md §4). */
    strictMethods: boolean;
    /** Extra allowed method names per network. */
    extraMethods: Record<string, string[]>;
    /**
     * A call's time budget, ms, from its start to its answer (an adapter's node calls and a retry on another node
     * included); past it the node request is aborted and the caller gets 504 -32015. `debug_*` get `debugTimeoutMs`.
     */
    timeoutMs: number;
    debugTimeoutMs: number;
    /** A whole request's time budget, ms (a batch's items included): past it no further item starts, and those in flight are aborted. */
    requestTimeoutMs: number;
    /**
     * Most gas an `eth_call`, `eth_estimateGas` or `debug_traceCall` may burn on the node (geth's RPC gas cap, 50M);
     * a call asking more runs with the cap. 0: no cap.
     */
    gasCap: number;
    /** Largest answer a node may give to one call, bytes; a larger one is -32005 and is never held whole. */
    maxAnswerBytes: number;
    /** Largest sum of node answers held at once for all calls, bytes (≥ maxAnswerBytes); past it, -32005 answers_busy. */
    maxAnswerBytesInFlight: number;
    /**
     * Largest response to one HTTP request, bytes (the sum of a batch's answers); a batch item that does not fit
     * is answered -32005 answer_too_large instead. Default 32 MiB; ≥ maxAnswerBytes.
     */
    maxResponseBytes: number;
    /** Largest sum of responses held at once for all requests, bytes; past it, an item is -32005 answers_busy. Default 256 MiB. */
    maxResponseBytesInFlight: number;
  };
  embedded: EmbeddedChainConfig;
  /** Plans by id; each missing from the store is created at start-up (existing ones are the operator's to edit). */
  plans: Record<string, PlanConfig>;
  accounts: {
    /** Plan of new accounts and of the demo account. */
    defaultPlan: string;
    /** Login of the operator created on first start (password printed once, or NODEGATE_OPERATOR_PASSWORD). */
    operatorEmail: string;
  };
  auth: {
    /** How long a resolved key is trusted without asking the store, ms: the bound on cross-instance revocation. */
    keyCacheTtlMs: number;
    /** How often last-used times are written, ms (batched, never per request). */
    lastUsedFlushMs: number;
  };
  database: {
    /** PostgreSQL URL (DATABASE_URL); absent: the SQLite file in dataDir. */
    url?: string;
  };
  limits: {
    /** false: no per-second limits and no quota (plans still decide batch size, debug methods, filters). */
    enabled: boolean;
    /**
     * Bucket size of the per-second limit, in seconds of the plan's rate: the burst a key may spend at once, as
     * hosted services allow bursts (RateLimit-Limit is this bucket). Default 10 s.
     */
    burstSeconds: number;
    /** Compute units per method, over the default table (src/methods/default-costs.ts). */
    costs: Record<string, number>;
    /** Cost of a method that is in neither table (an operator's extra method). */
    defaultCost: number;
    /** Cost of an item refused before it ran (invalid, unknown method, invalid params, forbidden), and of a body that is not JSON-RPC. */
    invalidCost: number;
    /**
     * Bytes of request body per extra compute unit (default 1,024): a body costs one more unit per whole KiB
     * (1 MiB: 1,024, as a trace), charged at admission from its Content-Length, before it is read (issue 17:
     * parsing a MiB of dense JSON takes 50-100 ms; a free plan's 330 units/s then buy a few % of a core).
     */
    bodyBytesPerUnit: number;
    /**
     * A request refused at admission for its key's empty bucket is answered after this long at most, ms (never later
     * than a retry could pass); 0: at once. Default 1,000: a key sending into its empty bucket gets ~1 refusal a second
     * per connection instead of hundreds.
     */
    refusalDelayMs: number;
    /** How often monthly usage is written to the store, ms (batched, never per request). */
    usageFlushMs: number;
    /** Failed authentications allowed per client IP: a rate per second and a burst (keys cannot be guessed at speed). */
    unknownKeys: { perSecond: number; burst: number };
    /** Management API calls per account (/api/v1): a rate per second and a burst, per instance. */
    managementApi: { perSecond: number; burst: number };
    /**
     * Password logins, per instance: failed checks per client address (a rate per minute and a burst; a /24 or /64
     * gets three times both), checks at once per /24 or /64 (one per address), and new dashboard sessions per address.
     */
    logins: { failuresPerMinute: number; failureBurst: number; checksPerSubnet: number; sessionsPerMinute: number; sessionBurst: number };
    /** Redis for limits shared by several instances (REDIS_URL); absent: in memory. */
    redisUrl?: string;
    /** How long a Redis command may take before this instance falls back to local limits, ms. */
    redisTimeoutMs: number;
    /** eth_getLogs: blocks one query may span and logs one answer may hold (0: any); whatever `enabled` says. */
    getLogs: { maxBlockRange: number; maxResults: number };
  };
  /** The response cache (docs/decisions.md §9), in memory, per instance. */
  cache: {
    enabled: boolean;
    /** Bytes of answers kept, all networks together; the least recently used go first. */
    maxBytes: number;
  };
  /** Usage recording for analytics (docs/decisions.md §10). */
  analytics: {
    enabled: boolean;
    /** How often recorded usage is written to the store, ms (a crash loses at most this much of analytics). */
    flushMs: number;
    /** Usage minutes older than this are dropped; 0: kept for ever. */
    retentionDays: number;
    /** Minute rows older than this are rolled up into one row per hour, hours (issue 17). */
    rollupAfterHours: number;
    /** The widest range one analytics query may span, days: a wider one is 400. */
    maxRangeDays: number;
    /** Usage rows one analytics query may read (in pages, yielding to callers between them): past it, 400. */
    maxRowsPerQuery: number;
    /** Distinct usage rows (key, network, method, outcome) one account makes per minute; past it, calls count under key and method `(other)`. */
    maxCellsPerAccountMinute: number;
    /** Keys revoked longer ago than this leave the store, days (their usage folded into the account's `(revoked)` rows); 0: kept for ever. */
    revokedKeyDays: number;
    /** Webhook test events ("Send test") older than this leave the outbox, hours, delivered or not; 0: kept until webhooks.retentionDays. */
    testEventHours: number;
  };
  /** `/metrics` (Prometheus text format) for the operator. */
  metrics: {
    enabled: boolean;
    /** Client addresses (IPs or CIDRs) that may read it; others get 404. */
    allow: string[];
  };
  /** Webhooks (docs/decisions.md §10). */
  webhooks: {
    enabled: boolean;
    /** Let targets be private, loopback or link-local addresses: local development only. */
    allowPrivateTargets: boolean;
    /** Time a delivery attempt may take in all (DNS, connect, redirects, the whole answer), ms. */
    timeoutMs: number;
    /** Delivery attempts in flight at once, all webhooks together (each webhook has one at most: in order). */
    concurrency: number;
    /**
     * Bytes of recent blocks' events the producer keeps in memory per webhook, and for all webhooks together, to send
     * them again as removed after a reorganisation (past it, they are read back from the outbox).
     */
    keptBytesPerWebhook: number;
    keptBytesTotal: number;
    /** First retry after about this long, then twice as late each time (with jitter), at most an hour apart. */
    retryBaseMs: number;
    /** A webhook whose oldest undelivered event is older than this is disabled, with the reason. */
    giveUpAfterMs: number;
    /** How often the outbox is looked at, ms (also at once when events are written). */
    pollMs: number;
    /** How long an instance holds the events it is delivering; an instance that died lets go after this, ms. */
    leaseMs: number;
    /** Delivered events older than this are dropped from the outbox, days (0: kept for ever); waiting ones never. */
    retentionDays: number;
  };
  /** The web dashboard at /dashboard. */
  dashboard: {
    enabled: boolean;
    /** How long a login lasts, hours. */
    sessionHours: number;
    /** Live sessions per account; a login past it ends the account's oldest. */
    maxSessionsPerAccount: number;
  };
  /** The chain module's view of every network's upstreams (docs/decisions.md §9). */
  upstreams: {
    /**
     * How often each upstream is checked (its head read, its chain id after it was unreachable), ms. The network's
     * head comes from these checks and from every answer; answers tied to `latest` end when it moves.
     */
    checkIntervalMs: number;
    /** Blocks an upstream may lag the best head before it is skipped (per network: networks.<n>.maxLagBlocks). */
    maxLagBlocks: number;
    /** Failures in a row (calls or checks) that open an upstream's circuit breaker. */
    breakerFailures: number;
    /** How long an open breaker keeps an upstream out before one trial call, ms. */
    breakerCooldownMs: number;
  };
  /** Filters kept by the gateway (docs/decisions.md §8). */
  filters: {
    /** A filter not polled for this long is gone, ms (geth: 5 minutes). */
    idleTimeoutMs: number;
    /**
     * Bytes of reported logs one filter keeps to send again with `removed: true` after a reorganisation (the oldest
     * blocks' go first). A reorganisation reaching logs no longer kept ends the filter, saying so.
     */
    maxKeptBytes: number;
  };
  log: {
    level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
    /** One line per request (path redacted, never the key). */
    requests: boolean;
  };
}

const str = { type: 'string', minLength: 1 } as const;

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    server: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        host: { ...str, default: '127.0.0.1' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 8545 },
        bodyLimit: { type: 'integer', minimum: 1024, default: 1048576 },
        requestTimeoutMs: { type: 'integer', minimum: 100, default: 30000 },
        trustedProxies: { type: 'array', items: str, default: [] },
        maxConnections: { type: 'integer', minimum: 1, default: 10000 },
        maxConnectionsPerIp: { type: 'integer', minimum: 0, default: 256 },
        maxConnectionsPerSubnet: { type: 'integer', minimum: 0, default: 1024 },
        connectionPressure: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: 0.8 },
        pressureIdleTimeoutMs: { type: 'integer', minimum: 10, maximum: 600000, default: 1000 },
      },
    },
    dataDir: { ...str, default: './data' },
    networks: {
      type: 'object',
      minProperties: 1,
      propertyNames: { pattern: '^[a-z0-9][a-z0-9-]{0,62}$' },
      default: {
        mainnet: { chainId: 1, aliases: [] },
        testnet: { chainId: 11155111, aliases: ['devnet'] },
      },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['chainId'],
        properties: {
          chainId: { type: 'integer', minimum: 1 },
          upstream: { type: 'string', pattern: '^(embedded|https?://.+)$' },
          upstreams: {
            type: 'array',
            minItems: 1,
            maxItems: 32,
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['url'],
              properties: {
                url: { type: 'string', pattern: '^(embedded|https?://.+)$' },
                role: { enum: ['primary', 'fallback', 'dedicated'], default: 'primary' },
                weight: { type: 'number', exclusiveMinimum: 0, maximum: 1000, default: 1 },
                timeoutMs: { type: 'integer', minimum: 100 },
                debugTimeoutMs: { type: 'integer', minimum: 100 },
              },
            },
          },
          maxLagBlocks: { type: 'integer', minimum: 0, maximum: 100000 },
          aliases: { type: 'array', items: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }, default: [] },
          finalityDepth: { type: 'integer', minimum: 0, maximum: 100000 },
        },
      },
    },
    rpc: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        maxBatchSize: { type: 'integer', minimum: 1, maximum: 1000, default: 1000 },
        batchConcurrency: { type: 'integer', minimum: 1, maximum: 256, default: 16 },
        strictMethods: { type: 'boolean', default: false },
        extraMethods: { type: 'object', additionalProperties: { type: 'array', items: str }, default: {} },
        timeoutMs: { type: 'integer', minimum: 100, default: 30000 },
        debugTimeoutMs: { type: 'integer', minimum: 100, default: 120000 },
        requestTimeoutMs: { type: 'integer', minimum: 100, default: 180000 },
        gasCap: { type: 'integer', minimum: 0, default: 50000000 },
        maxAnswerBytes: { type: 'integer', minimum: 1024, default: 16777216 },
        maxAnswerBytesInFlight: { type: 'integer', minimum: 1024, default: 67108864 },
        maxResponseBytes: { type: 'integer', minimum: 1024, default: 33554432 },
        maxResponseBytesInFlight: { type: 'integer', minimum: 1024, default: 268435456 },
      },
    },
    embedded: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        hardfork: { ...str, default: 'prague' },
        genesisTimestamp: { type: 'integer', minimum: 0, default: 1735689600 },
        mnemonic: { ...str, default: 'test test test test test test test test test test test junk' },
        mining: { enum: ['auto', 'interval'], default: 'auto' },
        blockTimeSeconds: { type: 'number', exclusiveMinimum: 0, default: 2 },
        snapshotIntervalMs: { type: 'integer', minimum: 50, maximum: 1000, default: 500 },
        automineWatchdogMs: { type: 'integer', minimum: 20, default: 200 },
        historyBudgetMs: { type: 'integer', minimum: 0, maximum: 600000, default: 5000 },
      },
    },
    plans: {
      type: 'object',
      minProperties: 1,
      propertyNames: { pattern: '^[a-z0-9][a-z0-9-]{0,62}$' },
      default: {
        // The embedded default is for development (docs/decisions.md §7): the demo account and keys made without a plan
        // choice run on a plan no single developer's scripts, test suites or traces reach. The hosted-style plans
        // below are for real deployments (set accounts.defaultPlan).
        developer: { name: 'Developer', cuPerSecond: 1000000, cuPerMonth: 1000000000000000, maxBatchSize: 1000, debugMethods: true, maxFilters: 10000, maxKeys: 100, maxWebhooks: 100 },
        free: { name: 'Free', cuPerSecond: 330, cuPerMonth: 30000000, maxBatchSize: 100, debugMethods: false, maxFilters: 50, maxKeys: 10, maxWebhooks: 5 },
        growth: { name: 'Growth', cuPerSecond: 660, cuPerMonth: 400000000, maxBatchSize: 1000, debugMethods: true, maxFilters: 500, maxKeys: 100, maxWebhooks: 50 },
        enterprise: { name: 'Enterprise', cuPerSecond: 5000, cuPerMonth: 10000000000, maxBatchSize: 1000, debugMethods: true, maxFilters: 5000, maxKeys: 1000, maxWebhooks: 500 },
      },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'cuPerSecond', 'cuPerMonth'],
        properties: {
          name: str,
          cuPerSecond: { type: 'integer', minimum: 1 },
          cuPerMonth: { type: 'integer', minimum: 1 },
          maxBatchSize: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
          debugMethods: { type: 'boolean', default: false },
          maxFilters: { type: 'integer', minimum: 0, default: 100 },
          maxKeys: { type: 'integer', minimum: 1, default: 100 },
          maxWebhooks: { type: 'integer', minimum: 0, default: 20 },
        },
      },
    },
    accounts: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        defaultPlan: { ...str, default: 'developer' },
        operatorEmail: { ...str, default: 'operator@localhost' },
      },
    },
    auth: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        keyCacheTtlMs: { type: 'integer', minimum: 0, maximum: 60000, default: 1000 },
        lastUsedFlushMs: { type: 'integer', minimum: 100, default: 10000 },
      },
    },
    limits: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true },
        burstSeconds: { type: 'number', exclusiveMinimum: 0, maximum: 60, default: 10 },
        costs: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 }, default: {} },
        defaultCost: { type: 'integer', minimum: 0, default: 10 },
        invalidCost: { type: 'integer', minimum: 0, default: 1 },
        bodyBytesPerUnit: { type: 'integer', minimum: 256, default: 1024 },
        refusalDelayMs: { type: 'integer', minimum: 0, maximum: 10000, default: 1000 },
        usageFlushMs: { type: 'integer', minimum: 100, default: 2000 },
        unknownKeys: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            perSecond: { type: 'number', exclusiveMinimum: 0, default: 5 },
            burst: { type: 'integer', minimum: 1, default: 20 },
          },
        },
        logins: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            failuresPerMinute: { type: 'number', exclusiveMinimum: 0, default: 6 },
            failureBurst: { type: 'integer', minimum: 1, default: 10 },
            checksPerSubnet: { type: 'integer', minimum: 1, default: 2 },
            sessionsPerMinute: { type: 'number', exclusiveMinimum: 0, default: 10 },
            sessionBurst: { type: 'integer', minimum: 1, default: 20 },
          },
        },
        managementApi: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            perSecond: { type: 'number', exclusiveMinimum: 0, default: 50 },
            burst: { type: 'integer', minimum: 1, default: 200 },
          },
        },
        redisUrl: { type: 'string', pattern: '^rediss?://' },
        redisTimeoutMs: { type: 'integer', minimum: 10, maximum: 10000, default: 200 },
        getLogs: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            maxBlockRange: { type: 'integer', minimum: 0, default: 10000 },
            maxResults: { type: 'integer', minimum: 0, default: 10000 },
          },
        },
      },
    },
    cache: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true },
        maxBytes: { type: 'integer', minimum: 0, default: 67108864 },
      },
    },
    analytics: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true },
        flushMs: { type: 'integer', minimum: 100, maximum: 600000, default: 5000 },
        retentionDays: { type: 'integer', minimum: 0, maximum: 3650, default: 30 },
        rollupAfterHours: { type: 'integer', minimum: 1, maximum: 8760, default: 24 },
        maxRangeDays: { type: 'integer', minimum: 1, maximum: 3650, default: 31 },
        maxRowsPerQuery: { type: 'integer', minimum: 1000, maximum: 10000000, default: 100000 },
        maxCellsPerAccountMinute: { type: 'integer', minimum: 10, maximum: 1000000, default: 1000 },
        revokedKeyDays: { type: 'integer', minimum: 0, maximum: 3650, default: 30 },
        testEventHours: { type: 'integer', minimum: 0, maximum: 8760, default: 24 },
      },
    },
    metrics: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true },
        allow: { type: 'array', items: { type: 'string' }, default: ['127.0.0.0/8', '::1'] },
      },
    },
    webhooks: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true },
        allowPrivateTargets: { type: 'boolean', default: false },
        timeoutMs: { type: 'integer', minimum: 100, maximum: 60000, default: 5000 },
        concurrency: { type: 'integer', minimum: 1, maximum: 1000, default: 64 },
        keptBytesPerWebhook: { type: 'integer', minimum: 0, default: 8388608 },
        keptBytesTotal: { type: 'integer', minimum: 0, default: 67108864 },
        retryBaseMs: { type: 'integer', minimum: 10, maximum: 3600000, default: 5000 },
        giveUpAfterMs: { type: 'integer', minimum: 1000, default: 86400000 },
        pollMs: { type: 'integer', minimum: 20, maximum: 60000, default: 1000 },
        leaseMs: { type: 'integer', minimum: 200, maximum: 3600000, default: 60000 },
        retentionDays: { type: 'integer', minimum: 0, maximum: 3650, default: 7 },
      },
    },
    dashboard: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true },
        sessionHours: { type: 'number', exclusiveMinimum: 0, maximum: 720, default: 12 },
        maxSessionsPerAccount: { type: 'integer', minimum: 1, maximum: 1000, default: 20 },
      },
    },
    upstreams: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        checkIntervalMs: { type: 'integer', minimum: 20, maximum: 60000, default: 500 },
        maxLagBlocks: { type: 'integer', minimum: 0, maximum: 100000, default: 5 },
        breakerFailures: { type: 'integer', minimum: 1, maximum: 1000, default: 3 },
        breakerCooldownMs: { type: 'integer', minimum: 100, maximum: 600000, default: 5000 },
      },
    },
    filters: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        idleTimeoutMs: { type: 'integer', minimum: 100, maximum: 86400000, default: 300000 },
        maxKeptBytes: { type: 'integer', minimum: 0, default: 1048576 },
      },
    },
    database: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        url: { type: 'string', pattern: '^postgres(ql)?://' },
      },
    },
    log: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
        requests: { type: 'boolean', default: false },
      },
    },
  },
} as const;
