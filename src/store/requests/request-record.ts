/** One call as the request explorer keeps it: what a member needs to find it and see how it went. */
export interface RequestRecord {
  /** Grows with each record written: the order of the list and its cursor. Absent until written. */
  id?: string;
  /** When the request arrived, ISO 8601. */
  at: string;
  accountId: string;
  keyId: string;
  network: string;
  /** As usage records it: the method table's name, `(invalid)` when none was read. */
  method: string;
  /** 0 for a result, else the JSON-RPC error code. */
  code: number;
  /** The error's message, cut to the configured length; null for a result. */
  message: string | null;
  latencyMs: number;
  computeUnits: number;
  /** The request body's bytes (a batch's whole body, for each of its calls). */
  requestBytes: number;
  /** This call's answer, in bytes (0: a notification, or an answer never written). */
  responseBytes: number;
  /** `HIT`, `MISS` (looked up in the cache), or null (not cached). */
  cache: string | null;
  /** The upstream that answered, as its label; null: the gateway answered (a refusal, the cache, a filter). */
  node: string | null;
  /** The request's `X-Request-Id` (a socket's: its upgrade request's). */
  requestId: string;
  /** The call's params as JSON, cut to the configured length; null when none were read. */
  params: string | null;
  /** 1: every call of its account and minute is kept; n: 1 in n was (the account was past its plan's share). */
  sampleEvery: number;
}

/** What a list of records may be narrowed to; newest first, `before` an id (the next page's cursor). */
export interface RequestQuery {
  /** Absent: every account (the operator's). */
  accountId?: string;
  requestId?: string;
  keyId?: string;
  network?: string;
  method?: string;
  /** `ok`, `error`, or one code. */
  outcome?: 'ok' | 'error' | number;
  /** [from, to), ISO times. */
  from?: string;
  to?: string;
  before?: string;
  limit: number;
}
