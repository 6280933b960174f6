/** Latency buckets of usage rows, ms: a call counts in the first bucket its time fits; the last is "above". */
export const LATENCY_BUCKETS_MS = [5, 25, 100, 500, 2500] as const;

/** One minute of one key's calls of one method on one network with one outcome (docs/decisions.md §10: usage analytics). */
export interface UsageMinute {
  /** UTC minute, `YYYY-MM-DDTHH:MM`. */
  minute: string;
  accountId: string;
  keyId: string;
  network: string;
  method: string;
  /** 0: answered with a result; else the JSON-RPC error code of the answer. */
  code: number;
  requests: number;
  computeUnits: number;
  latencyMsSum: number;
  /** Calls per bucket of LATENCY_BUCKETS_MS, and one more for the slower ones. */
  latency: number[];
}

/** Usage rows of minutes in [from, to), optionally of one account, key, network, method or outcome. */
export interface UsageQuery {
  from: string;
  to: string;
  /** The rows of this grain (default: minute). An hour's row is at its first minute, a day's at `T00:00`. */
  grain?: 'minute' | 'hour' | 'day';
  /** One account; EVERYONE (''): every account's calls added up; absent: every account's own rows. */
  accountId?: string;
  keyId?: string;
  network?: string;
  /** One method (as recorded: `(invalid)`, `(refused)`, `(other)` included). */
  method?: string;
  /** Answered with a result (`ok`, code 0), with any error (`error`), or with this code. */
  status?: UsageStatus;
  /** A page (analytics read in bounded pages): at most `limit` rows, in row order, after the row `after`. */
  limit?: number;
  after?: UsageCursor;
}

/** An outcome filter of usage: results, errors, or one code (JSON-RPC error codes are what rows keep). */
export type UsageStatus = 'ok' | 'error' | number;

/** Requests, errors and units of a range of usage rows, added up (the alert checker's error rate). */
export interface UsageSums { requests: number; errors: number; computeUnits: number }

/** Where a page of usage rows ended: the last row's identity (rows are ordered by these). */
export type UsageCursor = Pick<UsageMinute, 'minute' | 'keyId' | 'network' | 'method' | 'code'>;

/**
 * Usage kept under no real key: of keys pruned after their revocation (`(revoked)`), and of calls past
 * the recorder's cells per account and minute (`(other)`). The account is part of the id because rows are keyed by
 * key id (two accounts' `(revoked)` rows must not add up); reports show the part before the colon.
 */
export const groupKeyId = (group: '(revoked)' | '(other)', accountId: string) => `${group}:${accountId}`;
