/**
 * The one catalogue of gateway errors (docs/decisions.md §5). Every error the gateway itself produces comes
 * from a row here; `docs/errors.md` mirrors this table and `errors/catalogue.test.ts` keeps the two equal.
 * Upstream JSON-RPC errors are not in it: they pass through with HTTP 200, without a node's internals
 * (upstream/classify.ts `forCaller`).
 */
export interface CatalogueEntry {
  /** HTTP status of a response whose only answer is this error (items of a batch always come with 200). */
  readonly status: number;
  readonly code: number;
  /** Message template; `{name}` is replaced by the detail of the same name. */
  readonly message: string;
  /** Stable machine-readable reason, returned as `error.data.reason`. */
  readonly reason: string;
  /** When it happens, as documented. */
  readonly situation: string;
}

export const catalogue = {
  PARSE_ERROR: { status: 400, code: -32700, message: 'Parse error', reason: 'parse_error', situation: 'body is not JSON (the message says where it stops being JSON, or that it is empty)' },
  INVALID_REQUEST: { status: 400, code: -32600, message: 'Invalid Request', reason: 'invalid_request', situation: 'not a valid request object / batch framing' },
  BODY_TOO_LARGE: { status: 413, code: -32600, message: 'request body exceeds {limit} bytes', reason: 'body_too_large', situation: 'body too large' },
  REQUEST_TIMEOUT: { status: 408, code: -32600, message: 'request not received within {limit} ms', reason: 'request_timeout', situation: 'the request (headers and body) took longer than server.requestTimeoutMs to arrive' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, code: -32600, message: 'unsupported content type {type}', reason: 'unsupported_media_type', situation: 'content type not JSON' },
  HTTP_METHOD_NOT_ALLOWED: { status: 405, code: -32600, message: 'HTTP method {method} not allowed, use POST', reason: 'http_method_not_allowed', situation: 'GET or another HTTP method on the endpoint' },
  ROUTE_NOT_FOUND: { status: 404, code: -32600, message: 'no endpoint at this path; use POST /v1/{network}/{apikey}', reason: 'route_not_found', situation: 'a path that is not an endpoint' },
  METHOD_NOT_FOUND: { status: 200, code: -32601, message: 'the method {method} does not exist/is not available', reason: 'method_not_found', situation: 'method not allowed' },
  INVALID_PARAMS: { status: 200, code: -32602, message: 'Invalid params', reason: 'invalid_params', situation: 'invalid params' },
  KEY_MISSING: { status: 401, code: -32010, message: 'no API key in the URL: call /v1/{network}/{your key} (the dashboard shows the complete URL when a key is made)', reason: 'key_missing', situation: 'the path has no key' },
  INVALID_KEY: { status: 401, code: -32010, message: 'invalid API key', reason: 'invalid_key', situation: 'unknown, malformed or expired key' },
  KEY_REVOKED: { status: 401, code: -32010, message: 'API key revoked', reason: 'key_revoked', situation: 'revoked key' },
  JWT_MISSING: { status: 401, code: -32010, message: 'this key requires a JWT: send it as Authorization: Bearer <token>', reason: 'jwt_missing', situation: 'the key requires a JWT and the request (or the WebSocket upgrade) carries none' },
  JWT_EXPIRED: { status: 401, code: -32010, message: 'the JWT has expired', reason: 'jwt_expired', situation: "the key's JWT is past its exp (60 s of clock skew allowed)" },
  JWT_INVALID: { status: 401, code: -32010, message: 'the JWT is not valid: {detail}', reason: 'jwt_invalid', situation: "the key's JWT has a bad signature, is signed by none of the key's public keys, is not a JWT, has no exp or is not valid yet (nbf)" },
  JWT_AUDIENCE: { status: 401, code: -32010, message: 'the JWT is not for this key: its aud is none the key accepts', reason: 'jwt_audience', situation: "the key's JWT has no aud, or one the key's audiences do not list" },
  FORBIDDEN: { status: 403, code: -32011, message: 'forbidden: {detail}', reason: 'forbidden', situation: "key lacks permission; IP, origin, network, user agent or method not allowed for the key; a contract its call names not in the key's allowlist; a method the key denies" },
  UNKNOWN_NETWORK: { status: 404, code: -32012, message: 'unknown network {network}; this gateway serves {known}', reason: 'unknown_network', situation: 'unknown network (the message lists the networks served)' },
  LIMIT_EXCEEDED: { status: 429, code: -32005, message: 'limit exceeded', reason: 'limit_exceeded', situation: 'per-second limit or plan quota exceeded' },
  LOGS_TOO_MANY: { status: 200, code: -32005, message: 'query returned more than {limit} results. Try with this block range [{from}, {to}].', reason: 'logs_too_many', situation: 'eth_getLogs too many results / too wide a range' },
  FILTER_NOT_FOUND: { status: 200, code: -32000, message: 'filter not found', reason: 'filter_not_found', situation: 'filter id unknown, expired, or of another key' },
  FILTER_LIMIT: { status: 200, code: -32005, message: 'too many filters: this account may keep {limit} at once; uninstall one or let one expire', reason: 'filter_limit', situation: "a new filter would pass the plan's filters, per key and per account" },
  NOTIFICATIONS_UNSUPPORTED: { status: 200, code: -32601, message: 'notifications not supported', reason: 'notifications_unsupported', situation: 'eth_subscribe or eth_unsubscribe over HTTP (they need a WebSocket: ws:// on the same path)' },
  SUBSCRIPTION_LIMIT: { status: 200, code: -32005, message: 'too many subscriptions: this socket may hold {limit} at once; unsubscribe one', reason: 'subscription_limit', situation: 'a new subscription would pass ws.maxSubscriptionsPerSocket' },
  SUBSCRIPTION_PLAN_LIMIT: { status: 200, code: -32005, message: 'too many subscriptions: this {scope} may hold {limit} at once on plan {plan}; unsubscribe one', reason: 'subscription_limit', situation: "a new subscription would pass the plan's subscriptionsPerKey or subscriptionsPerAccount (counted on the instance holding the sockets)" },
  MESSAGE_RATE: { status: 429, code: -32005, message: 'limit exceeded: this socket may send {limit} messages a second (bursts of {burst}); send again in {retryAfterMs} ms', reason: 'message_rate', situation: 'a WebSocket message past ws.messagesPerSecond and ws.messageBurst (the socket stays open; one that keeps sending as fast again is closed, 1008)' },
  FILTERS_UNAVAILABLE: { status: 503, code: -32002, message: 'filters are unavailable, try again shortly', reason: 'filters_unavailable', situation: 'a filter method while the Redis that holds filters in cluster mode fails or is slower than limits.redisTimeoutMs (other methods are not affected); or a filter polled on several instances at once' },
  FILTER_OVERFLOW: { status: 200, code: -32000, message: 'filter overflowed: a reorganisation reached logs it could no longer keep; it is uninstalled, call eth_getLogs from block {from} and make a new filter', reason: 'filter_overflow', situation: "a reorganisation reached logs past the filter's kept-bytes budget (filters.maxKeptBytes)" },
  ANSWER_TOO_LARGE: { status: 200, code: -32005, message: "the node's answer to {method} exceeds {limit} bytes; ask for less (a smaller range, a lighter tracer)", reason: 'answer_too_large', situation: "the node's answer to one call exceeds rpc.maxAnswerBytes (it is never held whole)" },
  ANSWERS_BUSY: { status: 503, code: -32005, message: 'the gateway holds {limit} bytes of node answers for other calls; try again shortly', reason: 'answers_busy', situation: 'the answers being read for all calls at once reached rpc.maxAnswerBytesInFlight; retryable' },
  RESPONSE_TOO_LARGE: { status: 200, code: -32005, message: 'the answers to this request exceed {limit} bytes; send {method} alone or in a smaller batch', reason: 'answer_too_large', situation: "a batch item's answer does not fit what is left of rpc.maxResponseBytes for its request (the items before it took the rest)" },
  RESPONSES_BUSY: { status: 503, code: -32005, message: 'the gateway holds {limit} bytes of responses for other requests; try again shortly', reason: 'answers_busy', situation: 'the responses held for all requests at once reached rpc.maxResponseBytesInFlight; retryable' },
  RESPONSES_HELD: { status: 503, code: -32005, message: 'responses to this {holder} not yet read by its clients hold {limit} bytes; read them, or try again shortly', reason: 'answers_busy', situation: 'the responses held for one key, one account or one client address reached rpc.responseShare of rpc.maxResponseBytesInFlight; retryable' },
  TRANSACTION_NOT_FOUND: { status: 200, code: -32000, message: 'transaction not found', reason: 'transaction_not_found', situation: 'debug_traceTransaction of an unknown hash (geth wording)' },
  UPSTREAM_UNAVAILABLE: { status: 503, code: -32002, message: 'resource unavailable', reason: 'upstream_unavailable', situation: 'no healthy upstream' },
  BLOCK_NOT_HELD: { status: 200, code: -32001, message: '{what} at block {block} is not held by any node of {network}: {served}', reason: 'block_not_held', situation: 'a call at a block whose state (balances, code, storage, calls, traces) or history (the block, its receipts and logs) no node of the network that answers holds: pruned nodes only, or the archive node down; `data.servedFrom` is the oldest block served' },
  ANSWER_UNVERIFIED: { status: 502, code: -32002, message: 'no node of {network} gave an answer to {method} that passed verification ({check}); the wrong answer is withheld', reason: 'answer_unverified', situation: "every node asked answered a call with something that failed a check of the network's `verify` level (`check`: the first that failed, e.g. `log-bloom`, `receipt-block`, `block-hash`); a network of one node that fails a check gives this, never the answer" },
  UPSTREAMS_BUSY: { status: 503, code: -32005, message: 'the nodes of this network are at their configured rate or concurrency; try again shortly', reason: 'upstreams_busy', situation: 'a read found every upstream it may use at its own rate or concurrency (upstreams[].rate, upstreams[].concurrency) for longer than upstreams.limitWaitMs; retryable' },
  UPSTREAM_TIMEOUT: { status: 504, code: -32015, message: 'request timed out', reason: 'upstream_timeout', situation: 'upstream timed out' },
  STORE_UNAVAILABLE: { status: 503, code: -32002, message: 'resource unavailable', reason: 'store_unavailable', situation: 'the store is unreachable and the key was not seen within auth.failStaticMs' },
  STORE_FULL: { status: 503, code: -32002, message: 'the store is full: nothing was changed; try again once the operator has freed space', reason: 'store_full', situation: "a write while the store's disk is full (SQLite SQLITE_FULL, PostgreSQL 53100 disk_full); nothing of the write is kept" },
  STORE_READ_ONLY: { status: 503, code: -32002, message: 'the store is read-only: nothing was changed; try again once the operator has made it writable', reason: 'store_read_only', situation: 'a write while the store cannot be written (SQLite SQLITE_READONLY: a read-only file or file system; PostgreSQL 25006: a read-only transaction, e.g. a standby); nothing of the write is kept' },
  STORE_UNREACHABLE: { status: 503, code: -32002, message: 'the store could not be reached: try again shortly', reason: 'store_unreachable', situation: 'the connection to the store was lost during a request of the management API (PostgreSQL ended the session: 57P01-57P03, a class 08 connection exception, or a reset socket); the pool opens a new one for the next request' },
  STORE_IO_ERROR: { status: 503, code: -32002, message: 'the store could not write (a disk I/O error): nothing was changed; try again shortly', reason: 'store_io_error', situation: 'a write failed with a disk I/O error (SQLite SQLITE_IOERR, PostgreSQL 58030 io_error); nothing of the write is kept' },
  CHAIN_JOURNAL_UNWRITABLE: { status: 503, code: -32002, message: 'the embedded chain takes no transactions while its journal cannot be written ({cause}); nothing was sent: try again once the operator has freed space', reason: 'chain_journal_unwritable', situation: "a transaction sent to an embedded chain whose data directory is full or read-only: it is refused before it reaches the chain (reads are served as usual)" },
  TRANSACTION_UNSETTLED: { status: 503, code: -32002, message: 'the transaction {hash} {state}; look it up by its hash before sending it again', reason: 'transaction_unsettled', situation: "an embedded chain took a transaction but could not make it durable (its block could not be journaled, or anvil stopped while taking it): the message says where it is" },
  INTERNAL: { status: 500, code: -32603, message: 'Internal error', reason: 'internal', situation: 'bug in the gateway' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorName = keyof typeof catalogue;

/** One catalogue row as the dashboard shows it next to usage ("error codes with their meaning"). */
export interface ErrorFact {
  /** The JSON-RPC code (several rows share one: -32005 is every limit). */
  code: number;
  /** The HTTP status of a request refused with it alone. */
  http: number;
  /** The stable reason (`error.data.reason`). */
  name: string;
  /** When it happens. */
  meaning: string;
}

/**
 * The catalogue as data for the front end (served in /dashboard/facts.json), in catalogue order: the dashboard
 * explains the codes in usage from this, not from a copy of its own.
 */
export function errorFacts(): ErrorFact[] {
  return Object.values(catalogue).map((e: CatalogueEntry) => ({ code: e.code, http: e.status, name: e.reason, meaning: e.situation }));
}
