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

/** Usage: compute units per account and month (the quota), and per-minute rows (analytics). */
export interface UsageStore {
  /**
   * Adds compute units to accounts' usage of `month` (`YYYY-MM`, UTC), in one batch (docs/decisions.md §7: flushed
   * periodically, never per request). Concurrent adds from several instances all count. With `batchId`, the batch
   * counts once however often it is sent: a write that failed for its sender (a time-out) may still have been
   * applied, and is sent again with the same id (limits/quota.ts); ids are kept a day.
   */
  addUsage(month: string, byAccount: ReadonlyMap<string, number>, batchId?: string): Promise<void>;
  /** Compute units an account has used in `month` (0 when none). */
  getUsage(accountId: string, month: string): Promise<number>;
  /**
   * Adds calls to usage minutes, in one batch (flushed off the hot path, never per request); concurrent adds from
   * several instances all count. With `batchId`, the batch counts once however often it is sent (see addUsage).
   */
  addUsageMinutes(rows: readonly UsageMinute[], batchId?: string): Promise<void>;
  listUsageMinutes(query: UsageQuery): Promise<UsageMinute[]>;
  /**
   * How many rows `listUsageMinutes(query)` would answer, counting no further than `cap`: min(count, cap). By the
   * same index as the read, and stopping at `cap`, so a range too large to read costs one bounded count.
   */
  countUsageMinutes(query: Omit<UsageQuery, 'limit' | 'after'>, cap: number): Promise<number>;
  /** Requests, errors (rows with a non-zero code) and units of the rows `query` selects, added up. */
  sumUsageMinutes(query: Omit<UsageQuery, 'limit' | 'after'>): Promise<UsageSums>;
  /** Drops usage minutes before `minute` (retention). */
  pruneUsageMinutes(before: string): Promise<void>;
  /**
   * Rolls up one hour: the first hour at or after `from` and before `before` that has usage rows; its
   * rows are folded into one row per cell at the hour's first minute (`HH:00`). Answers that hour and how many rows
   * went, or undefined when no such hour has rows. Adds stay exact: a late flush into a rolled hour is a minute row again.
   */
  rollupUsageHour(from: string, before: string): Promise<{ hour: string; removed: number } | undefined>;
}
