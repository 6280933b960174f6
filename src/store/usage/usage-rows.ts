import { sql, type ExpressionBuilder, type Expression, type OnConflictBuilder, type SqlBool } from 'kysely';
import type { Codec } from '../sql/codec.ts';
import type { Tables, UsageMinutesTable } from '../sql/tables.ts';
import type { UsageMinute, UsageQuery } from './usage-minute.ts';

/** The columns of a usage row, in the order an INSERT names them. */
export const USAGE_COLUMNS = [
  'minute', 'account_id', 'key_id', 'network', 'method', 'code', 'requests', 'compute_units', 'latency_ms_sum',
  'l0', 'l1', 'l2', 'l3', 'l4', 'l5',
] as const satisfies readonly (keyof UsageMinutesTable)[];

/** A row's identity, its primary key: the order rows are read and paged in. */
export const USAGE_CELL = ['minute', 'key_id', 'network', 'method', 'code'] as const;

/** The columns that add up: a flush, a roll-up and a fold all sum them. */
export const USAGE_SUMMED = ['requests', 'compute_units', 'latency_ms_sum', 'l0', 'l1', 'l2', 'l3', 'l4', 'l5'] as const;

export function usageMinuteRow(u: UsageMinute): UsageMinutesTable {
  const [l0, l1, l2, l3, l4, l5] = u.latency;
  return {
    minute: u.minute, account_id: u.accountId, key_id: u.keyId, network: u.network, method: u.method, code: u.code,
    requests: u.requests, compute_units: u.computeUnits, latency_ms_sum: u.latencyMsSum, l0, l1, l2, l3, l4, l5,
  };
}

export function usageMinuteFromRow(r: UsageMinutesTable, c: Codec): UsageMinute {
  return {
    minute: r.minute, accountId: r.account_id, keyId: r.key_id, network: r.network, method: r.method, code: Number(r.code),
    requests: c.big(r.requests), computeUnits: c.big(r.compute_units), latencyMsSum: c.big(r.latency_ms_sum),
    latency: [r.l0, r.l1, r.l2, r.l3, r.l4, r.l5].map(c.big),
  };
}

/** A batch of monthly units as the store takes it: a month `YYYY-MM`, distinct accounts, whole units not below zero. */
export function checkUsageBatch(month: string, ids: readonly string[], units: readonly number[]): void {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new TypeError(`usage month must be YYYY-MM, not "${month}"`);
  if (ids.length !== units.length) throw new TypeError(`usage of ${ids.length} accounts with ${units.length} figures`);
  for (let i = 0; i < units.length; i++) {
    if (!Number.isSafeInteger(units[i]) || units[i] < 0) throw new TypeError(`usage of account "${ids[i]}" must be whole compute units, not ${units[i]}`);
  }
  if (new Set(ids).size !== ids.length) throw new TypeError('usage names an account twice in one batch');
}

/** Adds an INSERT's usage rows to those already there (flushes and roll-ups add up; nothing is overwritten). */
export function addUpUsage(oc: OnConflictBuilder<Tables, 'usage_minutes'>, table: UsageTable = 'usage_minutes') {
  return oc.columns(USAGE_CELL).doUpdateSet((eb) => Object.fromEntries(
    USAGE_SUMMED.map((col) => [col, eb(sql.ref(`${table}.${col}`), '+', eb.ref(`excluded.${col}`))]),
  ));
}

/** The grains usage is kept at; a report reads the grain of its buckets. */
export type UsageGrain = 'minute' | 'hour' | 'day';
/** The table of each grain: the same columns, `minute` holding the bucket's first minute. */
export const USAGE_TABLES = { minute: 'usage_minutes', hour: 'usage_hours', day: 'usage_days' } as const;
export type UsageTable = (typeof USAGE_TABLES)[UsageGrain];

/**
 * The account and key of the rows that add up everyone's calls (per bucket, network, method and outcome): no real
 * account or key is empty. A query of all accounts leaves them out; the operator's report of everyone reads them alone.
 */
export const EVERYONE = '';

/**
 * The meta entry naming the first minute whose calls the hour and day rows do not hold yet: minutes from it are kept
 * as minute rows alone until their roll-up (usage-store.ts rollUp); a flush of an earlier minute (late) adds to its
 * hour and day rows itself. Reads of hours and days add the minute rows from it to the rolled-up rows.
 */
export const HOURS_FROM = 'usage.hoursFrom';

/** The first minute of `minute`'s bucket at `grain`. */
export const grainStart = (minute: string, grain: UsageGrain) =>
  (grain === 'minute' ? minute : grain === 'hour' ? `${minute.slice(0, 13)}:00` : `${minute.slice(0, 10)}T00:00`);

/**
 * A flush's minute rows as the rows of `grain` they add to: each cell's rows of one bucket added up, and everyone's
 * rows of the bucket (account and key EVERYONE) per network, method and outcome. Every row a write takes once.
 */
export function rowsAtGrain(rows: readonly UsageMinute[], grain: UsageGrain): UsageMinute[] {
  const out = new Map<string, UsageMinute>();
  const addTo = (id: string, r: UsageMinute, minute: string, accountId: string, keyId: string) => {
    const t = out.get(id);
    if (!t) { out.set(id, { ...r, minute, accountId, keyId, latency: [...r.latency] }); return; }
    t.requests += r.requests;
    t.computeUnits += r.computeUnits;
    t.latencyMsSum += r.latencyMsSum;
    for (let i = 0; i < r.latency.length; i++) t.latency[i] += r.latency[i];
  };
  for (const r of rows) {
    if (r.accountId === EVERYONE) continue;
    const minute = grainStart(r.minute, grain);
    const cell = `${r.network}\0${r.method}\0${r.code}`;
    if (grain !== 'minute') addTo(`${minute}\0${r.keyId}\0${cell}`, r, minute, r.accountId, r.keyId);
    addTo(`${minute}\0\0${cell}`, r, minute, EVERYONE, EVERYONE);
  }
  return [...out.values()];
}

/** The conditions of a usage query: its range (or, after a page, its cursor), account, key, network, method, outcome. */
export function usageFilter(q: UsageQuery) {
  return (eb: ExpressionBuilder<Tables, 'usage_minutes'>): Expression<SqlBool> => {
    // After a page, the cursor replaces the lower bound (it is past it): with both, SQLite seeks by the minute alone
    // and reads every row before the cursor again, page after page.
    const parts = q.after ? [eb('minute', '<', q.to)] : [eb('minute', '>=', q.from), eb('minute', '<', q.to)];
    // All accounts: every real account's rows, not everyone's added up (they would count each call twice).
    parts.push(q.accountId !== undefined ? eb('account_id', '=', q.accountId) : eb('account_id', '<>', EVERYONE));
    if (q.keyId !== undefined) parts.push(eb('key_id', '=', q.keyId));
    if (q.network !== undefined) parts.push(eb('network', '=', q.network));
    if (q.method !== undefined) parts.push(eb('method', '=', q.method));
    // By outcome: rows keep the answer's code, 0 for a result, else the error's.
    if (q.status === 'ok') parts.push(eb('code', '=', eb.lit(0)));
    else if (q.status === 'error') parts.push(eb('code', '<>', eb.lit(0)));
    else if (q.status !== undefined) parts.push(eb('code', '=', q.status));
    if (q.after) {
      // Keyset paging in row order: a seek in the index, whatever page it is (an OFFSET would read the pages before).
      const a = q.after;
      parts.push(eb(eb.refTuple(...USAGE_CELL), '>', eb.tuple(a.minute, a.keyId, a.network, a.method, a.code)));
    }
    return eb.and(parts);
  };
}

/** The hour `YYYY-MM-DDTHH:00` of a minute, and the next one. */
export function hourOf(minute: string): { hour: string; next: string } {
  const t = Date.parse(`${minute.slice(0, 13)}:00Z`);
  return { hour: `${minute.slice(0, 13)}:00`, next: new Date(t + 3_600_000).toISOString().slice(0, 16) };
}
