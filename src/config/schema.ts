import { Type, type Static, type TObject, type TProperties, type TSchema, type TUnsafe } from '@sinclair/typebox/type';
import { PLAN_LIMIT_SCHEMAS, type PlanLimitName, type PlanLimits } from './plan-limits.ts';

/**
 * The one configuration schema (STYLE principle 7), written once with TypeBox: each field's type, bounds,
 * default and unit side by side. From it come the TS type (`Config`, by `Static<>`), the validation at start-up (ajv
 * compiles it as the JSON Schema it is, and fills the defaults: load.ts), and docs/configuration.md's field table is
 * kept equal to it by configuration-doc.test.ts. The configuration is then frozen and passed down.
 *
 * `unit` is an annotation of ours (ajv ignores it, strict: false): what a number counts; the doc writes it first in
 * the field's row. A field with a `default` may be left out of the file but is always there after loading, so the
 * TS type has it required while the schema does not (see `section`).
 */

/** Filled by load.ts when absent (from another field), so required in the type but not in the file. */
const FILLED_AT_LOAD = 'filledAtLoad';

/**
 * An object of fields: unknown keys are errors (a typo is not ignored), and a field with a default (or filled at
 * load) is not required in the file. `default: {}` for a section, so a section left out gets all its defaults.
 */
function fields<T extends TProperties>(properties: T, options: Record<string, unknown> = {}): TObject<T> {
  const schema = Type.Object(properties, { additionalProperties: false, ...options });
  const json = schema as { required?: string[] };
  const required = (json.required ?? []).filter((k) => properties[k].default === undefined && !properties[k][FILLED_AT_LOAD]);
  if (required.length) json.required = required;
  else delete json.required;
  return schema;
}
const section = <T extends TProperties>(properties: T) => fields(properties, { default: {} });

/** A map from names to values, as JSON Schema writes it (`additionalProperties`), typed as a record. */
const map = <T extends TSchema>(value: T, options: Record<string, unknown> = {}): TUnsafe<Record<string, Static<T>>> =>
  Type.Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: value, ...options });

/** One of some words; an `enum` (not a union of constants) so a wrong one is one error listing the allowed. */
const oneOf = <const V extends readonly string[]>(values: V, options: Record<string, unknown> = {}): TUnsafe<V[number]> =>
  Type.Unsafe<V[number]>({ enum: values, ...options });

const text = (options: Record<string, unknown> = {}) => Type.String({ minLength: 1, ...options });
const int = (unit: string, options: Record<string, unknown> = {}) => Type.Integer({ unit, ...options });
const num = (unit: string, options: Record<string, unknown> = {}) => Type.Number({ unit, ...options });
const flag = (def: boolean) => Type.Boolean({ default: def });
/** A rate per second (or minute) and a bucket: the shape of every small limiter. */
const rate = (unit: string, perSecond: number, burst: number) =>
  section({ perSecond: num(unit, { exclusiveMinimum: 0, default: perSecond }), burst: int(unit, { minimum: 1, default: burst }) });

const NAME = '^[a-z0-9][a-z0-9-]{0,62}$';
const NODE_URL = '^(embedded|https?://.+)$';
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** An environment variable's name, as POSIX shells take it. */
const ENV_NAME = '^[A-Za-z_][A-Za-z0-9_]*$';
/** An HTTP header's name (RFC 9110 token). */
const HEADER_NAME = "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$";

/** One upstream of a network (docs/decisions.md §9). */
const upstreamSchema = fields({
  /** `embedded` (an anvil Nodegate supervises; then the network's only upstream) or the URL of a node. */
  url: Type.String({ pattern: NODE_URL }),
  /**
   * The same node's WebSocket address (geth: ws://host:8546; anvil: its HTTP address as ws://). Its light reads (a
   * balance, a nonce, the block number…) then go over one socket instead of an HTTP request each, HTTP while the
   * socket is down (docs/methods.md "Upstream batching"). While the network's blocks are followed, the node's own
   * `newHeads` pushes come over it too: a new head reaches subscribers as soon as a quorum pushed it
   * (docs/websocket.md). The embedded chain has one without it.
   */
  ws: Type.Optional(Type.String({ pattern: '^wss?://.+$' })),
  /**
   * primary: takes reads by weight and every raw transaction; fallback: used when no primary is usable, or every usable
   * one is at its own `rate` or `concurrency` (the overflow); dedicated: for Dedicated keys only.
   */
  role: oneOf(['primary', 'fallback', 'dedicated'], { default: 'primary' }),
  weight: num('share', { exclusiveMinimum: 0, maximum: 1000, default: 1 }),
  /**
   * Upstreams that hold the same accounts (the nodes' own keys) get an order: calls that sign or read accounts
   * (eth_accounts, eth_sign, eth_sendTransaction…) go to the first usable one in it; absent on all: the first primary.
   */
  signer: Type.Optional(int('order', { minimum: 1, maximum: 32 })),
  /** Per-upstream time-outs; absent: rpc.timeoutMs and rpc.debugTimeoutMs. */
  timeoutMs: Type.Optional(int('ms', { minimum: 100 })),
  debugTimeoutMs: Type.Optional(int('ms', { minimum: 100 })),
  /**
   * Light reads of different callers may share one batch to this node (docs/methods.md "Upstream batching"). Off for
   * a node or provider that charges, limits or refuses batches in a way the gateway cannot see (an HTTP 429 for a
   * batch it would take as single calls).
   */
  shareReads: flag(true),
  /**
   * Headers sent with every request to this node: a provider's key (`x-api-key`, `Authorization: Bearer …`). A
   * value is the header's text, or `{ env: NAME }`: the environment variable NAME, read at start (unset: the start
   * fails, naming the field). Never shown: not in logs, errors, /readyz, the banner nor the dashboard. A URL's
   * `user:password@` is sent as Basic `Authorization` the same way.
   */
  headers: map(Type.Union([Type.String(), fields({ env: Type.String({ pattern: ENV_NAME }) })]), { default: {}, propertyNames: { pattern: HEADER_NAME } }),
  /**
   * The node's own bounds, as a provider's plan sells them; 0: none. Calls past them wait for room (at most
   * upstreams.limitWaitMs) or go to another upstream (a fallback takes the overflow). Counted per instance, in calls
   * (a batch of ten is ten).
   */
  rate: num('calls / s', { minimum: 0, maximum: 1000000, default: 0 }),
  concurrency: int('calls', { minimum: 0, maximum: 100000, default: 0 }),
  /**
   * Its eth_getLogs bounds: a range wider than `maxBlockRange` is split into pieces it takes, an answer of
   * `maxResults` logs or more is taken as cut and asked again in halves; 0: none known (learnt from its refusals).
   */
  getLogs: section({
    maxBlockRange: int('blocks', { minimum: 0, default: 0 }),
    maxResults: int('logs', { minimum: 0, default: 0 }),
  }),
  /**
   * A provider's price list: units a call of each method costs (Alchemy's compute units, Infura's credits), counted in
   * /metrics (nodegate_upstream_units_total) so an operator sees units per client call. Empty, with no defaultUnits:
   * no units counted, only calls.
   */
  units: map(num('units', { minimum: 0 }), { default: {} }),
  /** Units of a method not in `units`; absent: 1. */
  defaultUnits: Type.Optional(num('units', { minimum: 0 })),
  /** Most calls one JSON-RPC batch to this node holds (a refusal of a batch for its size lowers it). */
  maxBatch: int('calls', { minimum: 1, maximum: 1000, default: 100 }),
  /** Methods it does not serve, by name or a prefix and `*` (`debug_*`): never sent to it (another upstream takes them). */
  lacks: Type.Array(Type.String({ pattern: '^[A-Za-z0-9_]+\\*?$' }), { default: [] }),
  /**
   * It holds the state and history (blocks, receipts, logs) of every block: never probed, and calls at any block may
   * go to it. Absent: what it holds is probed (upstreams.holdingsProbeMs) and learnt from its answers.
   */
  archive: flag(false),
  /** It holds the state of the last this many blocks (a full node: 128); 0: probed. */
  stateWindow: int('blocks', { minimum: 0, maximum: 100000000, default: 0 }),
});

const networkSchema = fields({
  chainId: int('chain id', { minimum: 1 }),
  /** Shorthand for one primary upstream: `embedded` or a URL. After loading, `upstreams` is what counts. */
  upstream: Type.Optional(Type.String({ pattern: NODE_URL })),
  /** The network's upstreams; filled from `upstream` (or `embedded`) when not given. */
  upstreams: Type.Array(upstreamSchema, { minItems: 1, maxItems: 32, [FILLED_AT_LOAD]: true }),
  /** Blocks an upstream may lag the best head before it is skipped; absent: upstreams.maxLagBlocks. */
  maxLagBlocks: Type.Optional(int('blocks', { minimum: 0, maximum: 100000 })),
  /** Healthy upstreams that must have a block with the same hash for it to be the head (0: a majority); absent: upstreams.quorum. */
  quorum: Type.Optional(int('nodes', { minimum: 0, maximum: 32 })),
  /**
   * Answers checked before they are passed on (docs/upstreams.md), on networks of nodes by URL, of one node or
   * several: `cheap` checks block-bearing answers against what was asked, their order, the agreed chain's hashes and
   * their block's header (kept, or one light read per block, at most 16 per answer): a block's hash worked out from
   * its fields, logs in their block's logsBloom, a receipt or transaction in its block; `full` also a block's
   * receipts against its receiptsRoot, and reads every header a wide answer needs; `off`. An answer that fails goes
   * to another node and is never passed on (none passes: ANSWER_UNVERIFIED).
   */
  verify: oneOf(['off', 'cheap', 'full'], { default: 'cheap' }),
  /** Other names the network answers to, e.g. `devnet` for `testnet` (docs/decisions.md §2). */
  aliases: Type.Array(Type.String({ pattern: NAME }), { default: [] }),
  /**
   * Blocks below the head after which an answer about a block cannot change any more (the cache keeps those for
   * ever). Absent: 0 for an embedded chain (nothing reorganises it), 64 for a node (two epochs on Ethereum).
   */
  finalityDepth: Type.Optional(int('blocks', { minimum: 0, maximum: 100000 })),
});

/** The limits' one definition (plan-limits.ts, plain data) as TypeBox properties, each typed by the value it holds. */
const planLimitProperties = Object.fromEntries(Object.entries(PLAN_LIMIT_SCHEMAS).map(([name, s]) => [name, Type.Unsafe({ ...s })])) as { [K in PlanLimitName]: TUnsafe<PlanLimits[K]> };

/** A plan as configured (docs/decisions.md §6): seeded into the store, then edited by the operator there. */
const planSchema = fields({ name: text(), ...planLimitProperties });

/**
 * The embedded default is for development (docs/decisions.md §7): the demo account and keys made without a plan
 * choice run on a plan no single developer's scripts, test suites or traces reach. The hosted-style plans are for
 * real deployments (set accounts.defaultPlan).
 */
const DEFAULT_PLANS = {
  developer: { name: 'Developer', cuPerSecond: 1000000, cuPerMonth: 1000000000000000, maxBatchSize: 1000, debugMethods: true, maxFilters: 10000, maxKeys: 100, maxWebhooks: 100, subscriptionsPerKey: 10000, subscriptionsPerAccount: 10000, requestLogHours: 24, requestLogMax: 10000 },
  free: { name: 'Free', cuPerSecond: 330, cuPerMonth: 30000000, maxBatchSize: 100, debugMethods: false, maxFilters: 50, maxKeys: 10, maxWebhooks: 5, subscriptionsPerKey: 10, subscriptionsPerAccount: 20, requestLogHours: 1, requestLogMax: 1000 },
  growth: { name: 'Growth', cuPerSecond: 660, cuPerMonth: 400000000, maxBatchSize: 1000, debugMethods: true, maxFilters: 500, maxKeys: 100, maxWebhooks: 50, subscriptionsPerKey: 100, subscriptionsPerAccount: 500, requestLogHours: 24, requestLogMax: 10000 },
  enterprise: { name: 'Enterprise', cuPerSecond: 5000, cuPerMonth: 10000000000, maxBatchSize: 1000, debugMethods: true, maxFilters: 5000, maxKeys: 1000, maxWebhooks: 500, subscriptionsPerKey: 1000, subscriptionsPerAccount: 5000, requestLogHours: 72, requestLogMax: 100000 },
};

const embeddedSchema = section({
  /** EVM hardfork pinned so a chain is reproducible across anvil versions (docs/decisions.md §11). */
  hardfork: text({ default: 'prague' }),
  /** Fixed so genesis hashes never change. */
  genesisTimestamp: int('seconds', { minimum: 0, default: 1735689600 }),
  mnemonic: text({ default: 'test test test test test test test test test test test junk' }),
  /** `auto`: a block per transaction, with the watchdog; `interval`: a block every `blockTimeSeconds`. */
  mining: oneOf(['auto', 'interval'], { default: 'auto' }),
  blockTimeSeconds: num('seconds', { exclusiveMinimum: 0, default: 2 }),
  /** Deprecated, read by nothing: the chain journal replaced snapshots; accepted so older configuration files load. */
  snapshotIntervalMs: int('ms', { minimum: 50, maximum: 1000, default: 500, deprecated: true }),
  /**
   * A checkpoint (anvil's dump of the chain) is taken once this many blocks were journaled after the last one (and at
   * a stop past half of it), so a start replays at most about twice this many blocks (6-10 ms each) after loading it.
   */
  checkpointBlocks: int('blocks', { minimum: 10, default: 100 }),
  /** Re-arm automine when transactions wait and no block came for this long (foundry-rs/foundry#10122). */
  automineWatchdogMs: int('ms', { minimum: 20, default: 200 }),
  /**
   * Deprecated: saves nothing (the chain journal keeps the state at every block). Accepted so older configuration
   * files load, and what they set still holds: without `server.stopDeadlineMs`, a stop's deadline is 15 s past it.
   */
  historyBudgetMs: int('ms', { minimum: 0, maximum: 600000, default: 5000, deprecated: true }),
});

export const configSchema = section({
  server: section({
    host: text({ default: '127.0.0.1' }),
    port: int('port', { minimum: 0, maximum: 65535, default: 8545 }),
    /**
     * Processes serving the port (`nodegate start --workers N`, NODEGATE_WORKERS); 0: one per core. Above 1, a primary
     * process runs the embedded chains and keeps the state the workers share (limits, filters, heads), as Redis does
     * for instances; connection caps (`maxConnections*`) are then per worker.
     */
    workers: int('processes', { minimum: 0, maximum: 64, default: 1 }),
    /** Largest accepted request body (docs/decisions.md §2). */
    bodyLimit: int('bytes', { minimum: 1024, default: 1048576 }),
    /**
     * Longest time a request (headers and body) may take to arrive; slower ones get 408 and the connection is
     * closed, so a client trickling its body (slow loris) cannot hold a connection forever. fastify's default is none.
     */
    requestTimeoutMs: int('ms', { minimum: 100, default: 30000 }),
    /** Peers whose X-Forwarded-For is believed (IPs or CIDRs). */
    trustedProxies: Type.Array(text(), { default: [] }),
    /** Open at once, all clients together; past it new ones are refused. */
    maxConnections: int('connections', { minimum: 1, default: 10000 }),
    /** Open at once from one client address (trusted proxies excepted); 0: no cap. */
    maxConnectionsPerIp: int('connections', { minimum: 0, default: 256 }),
    /** Open at once from one /24 (IPv4) or /64 (IPv6) (trusted proxies excepted); 0: no cap. */
    maxConnectionsPerSubnet: int('connections', { minimum: 0, default: 1024 }),
    /**
     * Share of `maxConnections` past which connections are under pressure: each new one closes the oldest idle
     * connection (no request in flight), and idle ones older than `pressureIdleTimeoutMs` are closed.
     */
    connectionPressure: num('share', { exclusiveMinimum: 0, maximum: 1, default: 0.8 }),
    /** Idle time-out while under pressure (the usual keep-alive time-out is 72 s). */
    pressureIdleTimeoutMs: int('ms', { minimum: 10, maximum: 600000, default: 1000 }),
    /**
     * Longest time a response counted against rpc.maxResponseBytesInFlight (past its first 64 KiB; over WebSocket,
     * every queued answer) may take to be written to its client; past it the connection is closed and its bytes
     * given back, so a client that does not read cannot hold them. 30 s writes the largest response (32 MiB) at
     * about 9 Mbit/s.
     */
    writeTimeoutMs: int('ms', { minimum: 100, maximum: 600000, default: 30000 }),
    /**
     * A stop (SIGTERM, SIGINT, SIGHUP) that has not finished this long after the signal (requests answered, chains
     * journalled and stopped) gives up and exits 1. Absent: `embedded.historyBudgetMs` + 15 s (20 s by default), as
     * before this field had its own name.
     */
    stopDeadlineMs: int('ms', { minimum: 1000, [FILLED_AT_LOAD]: true }),
  }),
  /** Holds the SQLite store and the embedded chains' journals. */
  dataDir: text({ default: './data' }),
  networks: map(networkSchema, {
    minProperties: 1,
    propertyNames: { pattern: NAME },
    default: { mainnet: { chainId: 1, aliases: [] }, testnet: { chainId: 11155111, aliases: ['devnet'] } },
  }),
  ws: section({
    /** Messages of one socket being answered at once; past it the socket is not read until one is answered. */
    maxInFlightPerSocket: int('messages', { minimum: 1, maximum: 10000, default: 64 }),
    /**
     * Bytes queued to a socket its client has not read yet: past it the socket is closed (1008, "client not
     * reading"), never buffered without end.
     */
    maxBufferedBytes: int('bytes', { minimum: 65536, default: 16777216 }),
    /** Subscriptions one socket may hold (eth_subscribe); the plan caps them per key and per account too. */
    maxSubscriptionsPerSocket: int('subscriptions', { minimum: 1, maximum: 100000, default: 100 }),
    /**
     * Messages one socket may send a second, a batch being one message, on top of the account's compute
     * units per second: past it (and `messageBurst`) a message is answered -32005 `message_rate` unread, and a
     * socket whose refused messages also pass the same rate and burst is closed (1008 "message rate exceeded").
     */
    messagesPerSecond: int('messages / s', { minimum: 1, maximum: 1000000, default: 1000 }),
    /** Messages a socket may send at once past its rate (a bucket this big, refilled at `messagesPerSecond`). */
    messageBurst: int('messages', { minimum: 1, maximum: 1000000, default: 1000 }),
    /** Idle sockets are pinged this often; one that did not answer the last ping is closed. */
    pingIntervalMs: int('ms', { minimum: 1000, default: 30000 }),
    /**
     * Compute units each notification delivered costs, by subscription kind, charged to the account's monthly
     * quota as its calls' units are: one the month cannot pay for is not sent, and its socket is closed (1008).
     */
    newHeadsEventUnits: int('units', { minimum: 0, maximum: 10000, default: 10 }),
    logsEventUnits: int('units', { minimum: 0, maximum: 10000, default: 10 }),
    pendingTransactionEventUnits: int('units', { minimum: 0, maximum: 10000, default: 2 }),
  }),
  rpc: section({
    /**
     * Hard ceiling on the items of one batch, whatever the plan says (as geth, at most 1,000). The key's
     * plan `maxBatchSize` is the limit that applies; this only caps it.
     */
    maxBatchSize: int('items', { minimum: 1, maximum: 1000, default: 1000 }),
    /** Items of one batch in flight at once. */
    batchConcurrency: int('items', { minimum: 1, maximum: 256, default: 16 }),
    /** Drop `eth_chainId`, keeping the spec's list exactly (docs/decisions.md §4). */
    strictMethods: flag(false),
    /** Extra allowed method names per network (an embedded network without a list gets its anvil's extras: load.ts). */
    extraMethods: map(Type.Array(text()), { default: {} }),
    /**
     * A call's time budget, from its start to its answer (an adapter's node calls and a retry on another node
     * included); past it the node request is aborted and the caller gets 504 -32015. This one is for the calls a
     * node answers from what it holds (balances, blocks, receipts, a transaction sent): a healthy node takes
     * milliseconds, and a stalled one should cost a caller seconds. Calls that execute code or scan many blocks
     * (eth_call, eth_estimateGas, eth_getLogs, eth_getBlockReceipts) get `heavyTimeoutMs`; `debug_*` get `debugTimeoutMs`.
     */
    timeoutMs: int('ms', { minimum: 100, default: 5000 }),
    heavyTimeoutMs: int('ms', { minimum: 100, default: 30000 }),
    debugTimeoutMs: int('ms', { minimum: 100, default: 120000 }),
    /** A whole request's time budget (a batch's items included): past it no further item starts, and those in flight are aborted. */
    requestTimeoutMs: int('ms', { minimum: 100, default: 180000 }),
    /** Most gas an `eth_call`, `eth_estimateGas` or `debug_traceCall` may burn on the node (geth's RPC gas cap); a call asking more runs with the cap. 0: no cap. */
    gasCap: int('gas', { minimum: 0, default: 50000000 }),
    /** Largest answer a node may give to one call; a larger one is -32005 and is never held whole. */
    maxAnswerBytes: int('bytes', { minimum: 1024, default: 16777216 }),
    /** Largest sum of node answers held at once for all calls (≥ maxAnswerBytes, load.ts); past it, -32005 answers_busy. */
    maxAnswerBytesInFlight: int('bytes', { minimum: 1024, default: 67108864 }),
    /** Largest response to one HTTP request (a batch's answers together, 32 MiB); an item that does not fit is -32005 answer_too_large. */
    maxResponseBytes: int('bytes', { minimum: 1024, default: 33554432 }),
    /** Largest sum of responses held at once for all requests (256 MiB); past it, an item is -32005 answers_busy. */
    maxResponseBytesInFlight: int('bytes', { minimum: 1024, default: 268435456 }),
    /**
     * Share of maxResponseBytesInFlight that the responses of one key, of one account and of one client address may
     * hold at once, until written; past it, that tenant's item is -32005 answers_busy, and the others' are answered.
     */
    responseShare: num('share', { exclusiveMinimum: 0, maximum: 1, default: 0.25 }),
  }),
  embedded: embeddedSchema,
  /** Plans by id; each missing from the store is created at start-up (existing ones are the operator's to edit). */
  plans: map(planSchema, { minProperties: 1, propertyNames: { pattern: NAME }, default: DEFAULT_PLANS }),
  accounts: section({
    /** Plan of new accounts and of the demo account (must be one of `plans`: load.ts). */
    defaultPlan: text({ default: 'developer' }),
    /** Login of the operator created on first start (password printed once, or NODEGATE_OPERATOR_PASSWORD). */
    operatorEmail: text({ default: 'operator@localhost' }),
    /** Anyone may create an account at POST /api/v1/signup; off: accounts come from the operator and invitations. */
    openSignup: flag(false),
    /** Plan of accounts made by sign-up; absent: defaultPlan (must be one of `plans`: load.ts). */
    signupPlan: Type.Optional(text()),
    /** How long an invitation link works. */
    inviteHours: num('hours', { exclusiveMinimum: 0, maximum: 2160, default: 168 }),
    /** How long a password reset link works. */
    resetMinutes: num('minutes', { exclusiveMinimum: 0, maximum: 10080, default: 60 }),
    /** The dashboard's public origin for links in mail (`https://nodes.example.com`); absent: the address listened on. Never the request's Host. */
    publicUrl: Type.Optional(Type.String({ pattern: '^(https?://[^/?#]+/?)?$' })),
  }),
  /** Mail (invitations, password resets, alerts) from an outbox in the store, sent over SMTP. */
  mail: section({
    smtp: section({
      /** The SMTP server; absent: mail is not configured (nothing is written to the outbox, the API says so). */
      host: Type.Optional(Type.String({ maxLength: 253 })),
      port: int('port', { minimum: 1, maximum: 65535, default: 587 }),
      /** TLS from the start (port 465); false: STARTTLS when the server offers it. */
      secure: flag(false),
      user: Type.Optional(Type.String()),
      /** Secret: never logged. */
      password: Type.Optional(Type.String()),
      /** Bound on connecting, greeting and each SMTP command. */
      timeoutMs: int('ms', { minimum: 100, maximum: 300000, default: 10000 }),
    }),
    from: text({ default: 'Nodegate <nodegate@localhost>' }),
    /** How often each instance looks for mail to send (a new message is sent at once by the instance that wrote it). */
    pollMs: int('ms', { minimum: 10, maximum: 600000, default: 1000 }),
  }),
  auth: section({
    /** How long a resolved key is trusted without asking the store: the bound on cross-instance revocation. */
    keyCacheTtlMs: int('ms', { minimum: 0, maximum: 60000, default: 1000 }),
    /** Resolutions of keys kept in memory (a key, its account and its plan each), least recently used forgotten first. */
    keyCacheEntries: int('entries', { minimum: 0, default: 200000 }),
    /** Values no key has, kept apart (a flood of random values evicts only these), each for keyCacheTtlMs. */
    unknownKeyCacheEntries: int('entries', { minimum: 0, default: 10000 }),
    /**
     * Follow the store's changes to keys, accounts and plans (one indexed read every keyCacheTtlMs / 4): a key in use
     * stays cached until it changes, instead of being looked up again every keyCacheTtlMs; the revocation bound is
     * the same. false: each cached key is looked up again after keyCacheTtlMs.
     */
    keyCacheFollowsChanges: flag(true),
    /**
     * Keys (not revoked) read into memory at start, with their accounts and plans, and kept as the followed changes
     * say: a key's first use here needs no read of the store. Past it, further keys are looked up on first use.
     * Only with keyCacheFollowsChanges; 0: none read ahead.
     */
    keyDirectoryKeys: int('keys', { minimum: 0, default: 2000000 }),
    /** How often last-used times are written (batched, never per request). */
    lastUsedFlushMs: int('ms', { minimum: 100, default: 10000 }),
    /**
     * Fail static: while the store is unreachable, a key resolved within this long is served as it was then (its
     * plan, allowlists, revocation); a key not seen for longer, or never, gets 503 store_unavailable.
     */
    failStaticMs: int('ms', { minimum: 0, maximum: 86400000, default: 900000 }),
    /** How long a request waits for the store to look its key up before it is served from memory (or refused). */
    storeWaitMs: int('ms', { minimum: 50, maximum: 30000, default: 1000 }),
  }),
  limits: section({
    /** false: no per-second limits and no quota (plans still decide batch size, debug methods, filters). */
    enabled: flag(true),
    /**
     * Bucket size of the per-second limit, in seconds of the plan's rate: the burst an account may spend at once, as
     * hosted services allow bursts (RateLimit-Limit is this bucket).
     */
    burstSeconds: num('seconds', { exclusiveMinimum: 0, maximum: 60, default: 10 }),
    /** Compute units per method, over the method specs' (`cost`, src/methods/specs/). */
    costs: map(int('compute units', { minimum: 0 }), { default: {} }),
    /** Cost of a method that is in neither table (an operator's extra method). */
    defaultCost: int('compute units', { minimum: 0, default: 10 }),
    /** Cost of an item refused before it ran (invalid, unknown method, invalid params, forbidden), and of a body that is not JSON-RPC. */
    invalidCost: int('compute units', { minimum: 0, default: 1 }),
    /**
     * Bytes of request body per extra compute unit: a body costs one more unit per whole KiB (1 MiB: 1,024, as a
     * trace), charged at admission from its Content-Length, before it is read (parsing a MiB of dense JSON
     * takes 50-100 ms; a free plan's 330 units/s then buy a few % of a core).
     */
    bodyBytesPerUnit: int('bytes', { minimum: 256, default: 1024 }),
    /**
     * A request refused at admission for its account's empty bucket is answered after this long at most (never later
     * than a retry could pass); 0: at once. A key sending into its empty bucket gets ~1 refusal a second per
     * connection instead of hundreds.
     */
    refusalDelayMs: int('ms', { minimum: 0, maximum: 10000, default: 1000 }),
    /**
     * How long an account's monthly usage (the quota) may wait in memory before it is written to the store (batched,
     * never per request): a crash loses at most this much of it, and the store's figure is at most this old.
     */
    usageFlushMs: int('ms', { minimum: 100, default: 30000 }),
    /**
     * How often the usage of an account near its monthly quota is written (less than ten `usageFlushMs` of its plan's
     * per-second rate left): what another instance's refusal waits for.
     */
    nearQuotaFlushMs: int('ms', { minimum: 100, default: 2000 }),
    /** Failed authentications allowed per client IP (keys cannot be guessed at speed); with redisUrl, across instances. */
    unknownKeys: rate('requests', 5, 20),
    /**
     * Password logins: failed checks per client address (a /24 or /64 gets three times both) and new dashboard
     * sessions per address (with redisUrl, across instances), checks at once per /24 or /64 (one per address, per
     * instance: they hold its password-check slots).
     */
    logins: section({
      failuresPerMinute: num('failed password checks', { exclusiveMinimum: 0, default: 6 }),
      failureBurst: int('failed password checks', { minimum: 1, default: 10 }),
      checksPerSubnet: int('password checks', { minimum: 1, default: 2 }),
      sessionsPerMinute: num('dashboard logins', { exclusiveMinimum: 0, default: 10 }),
      sessionBurst: int('dashboard logins', { minimum: 1, default: 20 }),
    }),
    /** Management API calls per account (/api/v1); with redisUrl, across instances. */
    managementApi: rate('calls', 50, 200),
    /** Cluster mode (REDIS_URL): Redis holds what the instances share (limits and guards, filters, each network's head); absent: in memory. */
    redisUrl: Type.Optional(Type.String({ pattern: '^rediss?://' })),
    /**
     * How long any Redis command may take before it counts as failing, for every part kept there in cluster mode:
     * the per-second limits and the shared guards (unknown keys, login failures and back-off, new sessions, management
     * API calls) then fall back to this instance's memory; filter calls answer FILTERS_UNAVAILABLE; the shared head
     * and node checks fall back to this instance's own.
     */
    redisTimeoutMs: int('ms', { minimum: 10, maximum: 10000, default: 200 }),
    /** eth_getLogs: blocks one query may span and logs one answer may hold (0: any); whatever `enabled` says. */
    getLogs: section({
      maxBlockRange: int('blocks', { minimum: 0, default: 10000 }),
      maxResults: int('logs', { minimum: 0, default: 10000 }),
    }),
  }),
  /** The response cache (docs/decisions.md §9), in memory, per instance. */
  cache: section({
    enabled: flag(true),
    /** Answers kept, all networks together; the least recently used go first. */
    maxBytes: int('bytes', { minimum: 0, default: 67108864 }),
    /** A tier behind the memory cache, in Redis (`limits.redisUrl`), that the instances share and that outlives restarts. */
    shared: section({
      enabled: flag(false),
      /** Answers kept in Redis, all networks together; past it, those soonest to expire go. */
      maxBytes: int('bytes', { minimum: 1024, default: 268435456 }),
      /** How long an answer that cannot change is kept there. */
      ttlSeconds: int('seconds', { minimum: 1, maximum: 2592000, default: 86400 }),
      /** How long an answer tied to the cluster's shared head is kept there (0: not shared). */
      headTtlMs: int('ms', { minimum: 0, maximum: 600000, default: 15000 }),
      /** How long a miss waits for the same call made by another instance (0: it never waits). */
      waitMs: int('ms', { minimum: 0, maximum: 10000, default: 1000 }),
      /** Prepended to the tier's Redis keys: deployments (and test runs) sharing one Redis keep their answers apart. */
      redisPrefix: Type.String({ pattern: '^[A-Za-z0-9:_.-]{1,64}$', default: 'ng:ac:' }),
      /** A slower Redis command of the tier counts as Redis failing: the tier is left until Redis answers again. */
      timeoutMs: int('ms', { minimum: 5, maximum: 10000, default: 50 }),
    }),
  }),
  /** Usage recording for analytics (docs/decisions.md §10). */
  analytics: section({
    enabled: flag(true),
    /** How often recorded usage is written to the store (a crash loses at most this much of analytics). */
    flushMs: int('ms', { minimum: 100, maximum: 600000, default: 5000 }),
    /** Usage minutes older than this are dropped; 0: kept for ever. */
    retentionDays: int('days', { minimum: 0, maximum: 3650, default: 30 }),
    /** Minute rows older than this are rolled up into one row per hour. */
    rollupAfterHours: int('hours', { minimum: 1, maximum: 8760, default: 24 }),
    /** The widest range one analytics query may span: a wider one is 400. */
    maxRangeDays: int('days', { minimum: 1, maximum: 3650, default: 31 }),
    /** Usage rows one analytics query may read (in pages, yielding to callers between them): past it, 400, found by one count that stops there. */
    maxRowsPerQuery: int('rows', { minimum: 1000, maximum: 10000000, default: 100000 }),
    /** Distinct usage rows (key, network, method, outcome) one account makes per minute; past it, calls count under key and method `(other)`. */
    maxCellsPerAccountMinute: int('rows', { minimum: 10, maximum: 1000000, default: 1000 }),
    /** Keys one account's calls are told apart by per minute; past it, a further key's calls count under key `(other)` (network, method and outcome kept). */
    maxKeysPerAccountMinute: int('keys', { minimum: 1, maximum: 100000, default: 20 }),
    /** Keys revoked longer ago than this leave the store (their usage folded into the account's `(revoked)` rows); 0: kept for ever. */
    revokedKeyDays: int('days', { minimum: 0, maximum: 3650, default: 30 }),
    /** Webhook test events ("Send test") older than this leave the outbox, delivered or not; 0: kept until webhooks.retentionDays. */
    testEventHours: int('hours', { minimum: 0, maximum: 8760, default: 24 }),
  }),
  /** The request explorer (docs/request-explorer.md): each call of members' keys, kept within its plan's bounds. */
  explorer: section({
    enabled: flag(true),
    /** How often recorded calls are written to the store (a crash loses at most this much of them). */
    flushMs: int('ms', { minimum: 100, maximum: 600000, default: 1000 }),
    /** Calls held in memory until the next flush, all accounts together; past it, calls are not recorded (counted). */
    maxBuffered: int('calls', { minimum: 100, maximum: 1000000, default: 20000 }),
    /** Calls recorded per second by this instance, all accounts together; past it, 1 call in 100 is kept. */
    maxRecordsPerSecond: int('calls', { minimum: 1, maximum: 1000000, default: 1000 }),
    /** A call's params are kept as JSON cut to this many characters. */
    maxParamsChars: int('characters', { minimum: 0, maximum: 65536, default: 512 }),
    /** An error's message is kept cut to this many characters. */
    maxMessageChars: int('characters', { minimum: 0, maximum: 65536, default: 256 }),
  }),
  /** `/metrics` (Prometheus text format) for the operator. */
  metrics: section({
    enabled: flag(true),
    /** Client addresses (IPs or CIDRs) that may read it; others get 404. */
    allow: Type.Array(Type.String(), { default: ['127.0.0.0/8', '::1'] }),
  }),
  /** OpenTelemetry traces of RPC requests, sent by OTLP/HTTP (docs/production.md "Traces"); off: no work per request. */
  tracing: section({
    enabled: flag(false),
    /** The collector's OTLP/HTTP traces endpoint (JSON encoding). */
    otlpUrl: Type.String({ pattern: '^https?://.+$', default: 'http://127.0.0.1:4318/v1/traces' }),
    /** Share of requests traced, drawn at random per request (unless `followCallerSampled` and the caller decides). */
    sampleRatio: num('ratio', { minimum: 0, maximum: 1, default: 0.01 }),
    serviceName: text({ default: 'nodegate' }),
    /**
     * A caller's `traceparent` decides by its sampled flag, whatever the ratio. Off by default: any caller could
     * then make every request of theirs cost a trace; on behind a proxy or mesh that sets the flag itself.
     */
    followCallerSampled: flag(false),
    /**
     * A traced request's upstream calls carry a `traceparent` naming their attempt, so a node or provider that traces
     * joins the trace. Such a call goes alone, by HTTP (a shared node request or a socket frame has no headers of its
     * own), which costs more than the spans: off, a traced call is shared with others as any call, its attempt still a span.
     */
    sendTraceparent: flag(false),
  }),
  /** Webhooks (docs/decisions.md §10). */
  webhooks: section({
    enabled: flag(true),
    /**
     * Let targets be private, loopback or link-local addresses: local development only. Unset: true when every
     * network runs on an embedded chain (a development setup, whose webhooks go to a local receiver), else false.
     */
    allowPrivateTargets: Type.Boolean({ [FILLED_AT_LOAD]: true }),
    /** Time a delivery attempt may take in all (DNS, connect, redirects, the whole answer). */
    timeoutMs: int('ms', { minimum: 100, maximum: 60000, default: 5000 }),
    /** Delivery attempts in flight at once, all webhooks together (each webhook has one at most: in order). */
    concurrency: int('attempts', { minimum: 1, maximum: 1000, default: 64 }),
    /**
     * Recent blocks' events the producer keeps in memory per webhook, and for all webhooks together, to send them
     * again as removed after a reorganisation (past it, they are read back from the outbox).
     */
    keptBytesPerWebhook: int('bytes', { minimum: 0, default: 8388608 }),
    keptBytesTotal: int('bytes', { minimum: 0, default: 67108864 }),
    /** First retry after about this long, then twice as late each time (with jitter), at most an hour apart. */
    retryBaseMs: int('ms', { minimum: 10, maximum: 3600000, default: 5000 }),
    /** A webhook whose oldest undelivered event is older than this is disabled, with the reason. */
    giveUpAfterMs: int('ms', { minimum: 1000, default: 86400000 }),
    /**
     * How often the outbox is looked at (also at once when events are written). With `leaseMs` it bounds how soon a
     * dead instance's delivery is taken up by another: within leaseMs + pollMs (4.5 s).
     */
    pollMs: int('ms', { minimum: 20, maximum: 60000, default: 500 }),
    /**
     * How long a claim leases an event to its instance; an instance that died lets go after this. An attempt that
     * takes longer (a slow receiver, up to timeoutMs) keeps its lease by renewals, every leaseRenewMs.
     */
    leaseMs: int('ms', { minimum: 200, maximum: 3600000, default: 4000 }),
    /** How often an instance renews the leases of the attempts it has in flight (less than leaseMs). */
    leaseRenewMs: int('ms', { minimum: 50, maximum: 600000, default: 1000 }),
    /** Delivered events older than this are dropped from the outbox (0: kept for ever); waiting ones never. */
    retentionDays: int('days', { minimum: 0, maximum: 3650, default: 7 }),
  }),
  /** Usage alerts: quota and error-rate thresholds per account, sent by mail and as webhooks. */
  alerts: section({
    enabled: flag(true),
    /** How often each instance checks every account's alerts (usage reaches the store every analytics.flushMs and limits.usageFlushMs). */
    checkMs: int('ms', { minimum: 50, maximum: 3600000, default: 30000 }),
  }),
  /** The web dashboard at /dashboard. */
  dashboard: section({
    enabled: flag(true),
    /** How long a login lasts. */
    sessionHours: num('hours', { exclusiveMinimum: 0, maximum: 720, default: 12 }),
    /** Live sessions per account; a login past it ends the account's oldest. */
    maxSessionsPerAccount: int('sessions', { minimum: 1, maximum: 1000, default: 20 }),
  }),
  /** The chain module's view of every network's upstreams (docs/decisions.md §9). */
  upstreams: section({
    /**
     * How often each upstream is checked (its head and its chain id read). The network's head
     * comes from these checks and from every answer; answers tied to `latest` end when it moves.
     */
    checkIntervalMs: int('ms', { minimum: 20, maximum: 60000, default: 500 }),
    /**
     * A network of nodes by URL that nobody called for idleAfterMs, and whose blocks nothing follows (subscriptions,
     * webhooks), is checked this often instead (ms; 0 or a value not above checkIntervalMs: never slowed). The first
     * call after that waits for a round (at most checkIntervalMs), so it is answered from a fresh head. One instance
     * only: in a cluster the instance that checks is not the one called.
     */
    idleCheckMs: int('ms', { minimum: 0, maximum: 600000, default: 5000 }),
    /** How long without a call before a network is idle (idleCheckMs). */
    idleAfterMs: int('ms', { minimum: 0, maximum: 86400000, default: 30000 }),
    /** Blocks an upstream may lag the best head before it is skipped (per network: networks.<n>.maxLagBlocks). */
    maxLagBlocks: int('blocks', { minimum: 0, maximum: 100000, default: 5 }),
    /**
     * Healthy upstreams (answering, serving the network's chain, breaker not open) that must have a block with the
     * same hash for it to be the network's head, capped at how many there are, so one node when there is one
     * (per network: networks.<n>.quorum). 0 by default: a majority of the healthy nodes not found on another
     * branch, floor(n/2)+1 of n (2 of 3, 3 of 4 or 5): one node alone (lying, broken, or mining a branch of its
     * own) never sets the head while others disagree, two halves of a split network cannot both be followed, and
     * a network of two still follows the one left when the other is lost or stalled. 1: the highest believed head
     * of any node. Other than 1, eth_blockNumber answers that head, never a node's own number
     * (docs/architecture.md, "The agreed head").
     */
    quorum: int('nodes', { minimum: 0, maximum: 32, default: 0 }),
    /** Failures in a row (calls or checks) that open an upstream's circuit breaker. */
    breakerFailures: int('failures', { minimum: 1, maximum: 1000, default: 3 }),
    /** How long an open breaker keeps an upstream out before one trial call. */
    breakerCooldownMs: int('ms', { minimum: 100, maximum: 600000, default: 5000 }),
    /**
     * Hedged reads (networks with several upstreams): a read not answered within its node's usual time (1.5 times
     * its recent 95th percentile, at least hedgeMinMs, at most hedgeMaxMs) is also sent to another usable upstream;
     * the first answer wins and the other call is aborted. hedgeMaxMs 0: no hedging.
     */
    hedgeMinMs: int('ms', { minimum: 1, maximum: 60000, default: 50 }),
    hedgeMaxMs: int('ms', { minimum: 0, maximum: 60000, default: 500 }),
    /**
     * A read that finds every upstream it may use at its own `rate` or `concurrency` waits this long at most for room
     * before it is refused (503 -32005 upstreams_busy); upstreams without bounds never make a call wait.
     */
    limitWaitMs: int('ms', { minimum: 0, maximum: 10000, default: 250 }),
    /** Pieces of one eth_getLogs split to fit its upstreams' ranges (upstreams[].getLogs) asked at once. */
    logsPieces: int('calls', { minimum: 1, maximum: 64, default: 4 }),
    /**
     * How often the oldest block whose state, and whose history, each upstream of a network of several holds is
     * probed (a binary search, a few dozen light reads, paced as background work; skipped while nobody calls the
     * network); 0: never (what answers say is still learnt). Upstreams with `archive` or `stateWindow` are not
     * probed for what they say.
     */
    holdingsProbeMs: int('ms', { minimum: 0, maximum: 86400000, default: 600000 }),
  }),
  /** Filters kept by the gateway (docs/decisions.md §8). */
  filters: section({
    /** A filter not polled for this long is gone (geth: 5 minutes). */
    idleTimeoutMs: int('ms', { minimum: 100, maximum: 86400000, default: 300000 }),
    /**
     * Reported logs one filter keeps to send again with `removed: true` after a reorganisation (the oldest blocks'
     * go first). A reorganisation reaching logs no longer kept ends the filter, saying so.
     */
    maxKeptBytes: int('bytes', { minimum: 0, default: 1048576 }),
  }),
  database: section({
    /** PostgreSQL URL (DATABASE_URL); absent: the SQLite file in dataDir. */
    url: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
    /** PostgreSQL: the bound on opening a connection (a server that is down or hung is found out in this time). */
    connectTimeoutMs: int('ms', { minimum: 100, maximum: 60000, default: 3000 }),
    /** PostgreSQL: the bound on one query, client side (a hung server never holds a caller longer). */
    queryTimeoutMs: int('ms', { minimum: 100, maximum: 300000, default: 30000 }),
    /**
     * PostgreSQL: how long `nodegate start` waits for the database to take connections (down, starting, or out of
     * connections), trying again with back-off, before it gives up; 0: no waiting. A refusal that waiting cannot
     * mend (a wrong password, a database that does not exist) ends the start at once.
     */
    startWaitMs: int('ms', { minimum: 0, maximum: 3600000, default: 60000 }),
  }),
  log: section({
    level: oneOf(LOG_LEVELS, { default: 'info' }),
    /** One line per request (path redacted, never the key). */
    requests: flag(false),
  }),
});

/** The configuration after loading: every default filled in (load.ts), then frozen. */
export type Config = Static<typeof configSchema>;
export type NetworkConfig = Config['networks'][string];
export type UpstreamConfig = NetworkConfig['upstreams'][number];
export type EmbeddedChainConfig = Config['embedded'];
export type PlanConfig = Config['plans'][string];
