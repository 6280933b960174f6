import { sql } from 'kysely';
import { maintenanceWrite } from '../sql/maintenance.ts';
import { SqlDb } from '../sql/sql-db.ts';
import type { Big, Q, UsageMinutesTable } from '../sql/tables.ts';
import { anyOf, anyOfParameter } from '../sql/any-of.ts';
import { usageBatches } from './usage-batches.ts';
import type { UsageMinute, UsageQuery, UsageSums } from './usage-minute.ts';
import { addUpUsage, grainStart, hourOf, HOURS_FROM, USAGE_CELL, USAGE_COLUMNS, USAGE_SUMMED, USAGE_TABLES, checkUsageBatch, usageFilter, usageMinuteFromRow } from './usage-rows.ts';

export { groupKeyId, LATENCY_BUCKETS_MS } from './usage-minute.ts';
export { EVERYONE, grainStart, type UsageGrain } from './usage-rows.ts';
export type { UsageCursor, UsageMinute, UsageQuery, UsageStatus, UsageSums } from './usage-minute.ts';

/** Usage: compute units per account and month (the quota), and per-minute rows (analytics). */
export interface UsageStore {
  /**
   * Adds `units[i]` compute units (whole, not negative) to account `ids[i]`'s usage of `month` (`YYYY-MM`, UTC), each
   * account once, in one batch (docs/decisions.md §7: flushed periodically, never per request). Concurrent adds from
   * several instances all count, whatever order each names its accounts in. With `batchId`, the batch counts once
   * however often it is sent: a write that failed for its sender (a time-out) may still have been applied, and is sent
   * again with the same id (limits/quota.ts); ids are kept a day. Answers each account's total of the month once the
   * batch is added, as the store holds it (other instances' units in it), in the order of `ids`: undefined where
   * nothing was written (the account gone, the batch applied before), and that total is then read apart. Arrays, not
   * maps: the quota's flush of a long tail names tens of thousands of accounts, and a map each way cost it a lookup
   * per account on each side.
   */
  addUsage(month: string, ids: readonly string[], units: readonly number[], batchId?: string): Promise<Array<number | undefined>>;
  /** Compute units an account has used in `month` (0 when none). */
  getUsage(accountId: string, month: string): Promise<number>;
  /**
   * Compute units each of `accountIds` has used in `month` (absent: none), in one read per GET_USAGES_CHUNK accounts:
   * the quota's first reads and its reads after each flush ask for thousands of accounts at once.
   */
  getUsages(accountIds: readonly string[], month: string): Promise<Map<string, number>>;
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
  /**
   * The rows `query` selects added up by each of their dimensions, by the database: per bucket (`minute`), method,
   * key, network, outcome and account, each group with its sums and its errors. A report of any size is a few
   * dozen groups; the rows stay in the database.
   */
  summarizeUsage(query: Omit<UsageQuery, 'limit' | 'after'>): Promise<UsageGroup[]>;
  /**
   * The accounts with the most requests among the rows `query` selects (of all accounts), at most `limit`, each
   * with its rows added up into one (keyId, network and method empty, code 0; `errors`: its requests answered with an
   * error), most requests first. Added up by the database: the operator's report of everyone reads no account's rows.
   */
  topAccounts(query: Omit<UsageQuery, 'limit' | 'after' | 'accountId'>, limit: number): Promise<Array<UsageMinute & { errors: number }>>;
  /** Drops usage rows (every grain) before `minute` (retention). */
  pruneUsageMinutes(before: string): Promise<void>;
  /**
   * Adds the oldest minute rows not rolled up yet, before `before` (a minute) and within one hour, into their hour
   * and day rows; answers the minutes rolled up ([from, to)), or undefined when none is left before `before`.
   * Flushes write minute rows alone, so the hour and day rows grow by a roll-up every few minutes, not by each
   * flush; until their roll-up, reads of hours and days add the minute rows up. Exact whatever comes late or runs at
   * once: a flush of a minute already rolled up adds to its hour and day rows itself, and several instances rolling
   * up take turns (each minute once).
   */
  rollUp(before: string): Promise<{ from: string; to: string } | undefined>;
  /**
   * Minute rows before `before` (an hour's first minute) leave the store, the oldest hour of them per call, once
   * their hour is rolled up: from then on a read of minutes before `before` reads the hour rows (each hour's calls at
   * its first minute), which hold the same calls. Answers the hour and how many rows went, or undefined when none is
   * left. Exact whatever comes late: a late flush of such a minute is in its hour's row already, and its minute row
   * goes with the next call.
   */
  dropMinuteHour(before: string): Promise<{ hour: string; removed: number } | undefined>;
}

/** Accounts per read of getUsages: a list parameter each, so the database plans a bounded list. */
const GET_USAGES_CHUNK = 1000;

/** One group of summarizeUsage: the rows with `value` in dimension `by`, added up. */
export interface UsageGroup {
  by: UsageDimension;
  value: string;
  requests: number;
  computeUnits: number;
  errors: number;
  latencyMsSum: number;
  latency: number[];
}
export type UsageDimension = 'minute' | 'method' | 'key' | 'network' | 'code' | 'account';
const DIMENSIONS: Array<[UsageDimension, 'minute' | 'method' | 'key_id' | 'network' | 'code' | 'account_id']> = [
  ['minute', 'minute'], ['method', 'method'], ['key', 'key_id'], ['network', 'network'], ['code', 'code'], ['account', 'account_id'],
];

/** The meta entry naming the first minute whose minute rows are all kept (older ones are read from the hours). */
const MINUTES_FROM = 'usage.minutesFrom';

/** A meta entry's value, '' when absent, as a derived table of one row and column `v`. */
const metaValue = (name: string) => `(SELECT coalesce(max(value), '') AS v FROM meta WHERE name = '${name}')`;
const COLUMNS = USAGE_COLUMNS.join(', ');
// Cast back: PostgreSQL's sum of bigints is numeric, and a branch of a UNION must have the other's types.
const SUMS = USAGE_SUMMED.map((c) => `CAST(sum(${c}) AS bigint) AS ${c}`).join(', ');
/** Rows added up per bucket (the first column) and cell; positions, since `minute` names both a column and the bucket. */
const addedUp = (from: string) => `SELECT minute, account_id, key_id, network, method, code, ${SUMS} FROM (${from}) AS rows GROUP BY 1, 2, 3, 4, 5, 6`;
/** The SQL of the first minute of the bucket at `grain` of the minute `m` (an SQL text expression). */
const bucketOf = (m: string, grain: 'hour' | 'day') => (grain === 'hour' ? `substr(${m}, 1, 13) || ':00'` : `substr(${m}, 1, 10) || 'T00:00'`);
/**
 * The rows of an hour or day grain: that grain's rows of buckets before the one holding the first minute not rolled
 * up as they are; that bucket's and later ones' added up with the minute rows not rolled up (a bucket's row holds
 * its minutes rolled up so far). Nothing rolled up (''): every row of the grain with the minute rows.
 */
function grainRows(grain: 'hour' | 'day'): string {
  const table = USAGE_TABLES[grain];
  const from = `(SELECT CASE WHEN h.v = '' THEN '' ELSE ${bucketOf('h.v', grain)} END FROM ${metaValue(HOURS_FROM)} AS h)`;
  const minutes = `SELECT ${bucketOf('minute', grain)} AS minute, ${USAGE_COLUMNS.slice(1).join(', ')} FROM usage_minutes
    WHERE minute >= (SELECT v FROM ${metaValue(HOURS_FROM)} AS h)`;
  return `SELECT ${COLUMNS} FROM ${table} WHERE minute < ${from}
    UNION ALL ${addedUp(`SELECT ${COLUMNS} FROM ${table} WHERE minute >= ${from} UNION ALL ${minutes}`)}`;
}
/**
 * The rows of each grain as reads see them, one statement each (a roll-up or drop running meanwhile is seen whole or
 * not at all): minutes are the hour rows before the first minute kept and the minute rows from it; hours and days
 * as grainRows says.
 */
const GRAIN_ROWS = {
  minute: `SELECT ${COLUMNS} FROM usage_hours WHERE minute < (SELECT v FROM ${metaValue(MINUTES_FROM)} AS m)
    UNION ALL SELECT ${COLUMNS} FROM usage_minutes WHERE minute >= (SELECT v FROM ${metaValue(MINUTES_FROM)} AS m)`,
  hour: grainRows('hour'),
  day: grainRows('day'),
};

/** What a query reads: its grain's rows (GRAIN_ROWS). Typed as the minute table: the derived table has its columns. */
function tableOf(q: { grain?: keyof typeof USAGE_TABLES }): 'usage_minutes' {
  return sql.raw<UsageMinutesTable>(`(${GRAIN_ROWS[q.grain ?? 'minute']})`).as('usage_minutes') as unknown as 'usage_minutes';
}

/** The usage store on a database. */
export function usageStore(db: SqlDb): UsageStore {
  const { k, codec } = db;
  const batches = usageBatches(db);
  // The quota's reads of many accounts: compiled once, the ids one list parameter (a long tail of accounts seen for
  // the first time makes a read per turn of the event loop, and building each anew cost Kysely a node per id).
  const usagesOf = k.selectFrom('usage').select(['account_id', 'compute_units']).where('month', '=', '').where(anyOf(db, 'account_id', [])).compile();
  return {
    async addUsage(month, ids, units, batchId) {
      checkUsageBatch(month, ids, units);
      return ids.length === 0 ? [] : batches.addUsage(month, ids, units, batchId);
    },
    async getUsage(accountId, month) {
      const row = await k.selectFrom('usage').select('compute_units').where('account_id', '=', accountId).where('month', '=', month).executeTakeFirst();
      return row ? codec.big(row.compute_units) : 0;
    },
    async getUsages(accountIds, month) {
      const out = new Map<string, number>();
      for (let i = 0; i < accountIds.length; i += GET_USAGES_CHUNK) {
        const ids = accountIds.slice(i, i + GET_USAGES_CHUNK);
        const { rows } = await k.executeQuery<{ account_id: string; compute_units: Big }>({ ...usagesOf, parameters: [month, anyOfParameter(db, ids)] });
        for (const r of rows) out.set(r.account_id, codec.big(r.compute_units));
      }
      return out;
    },
    async addUsageMinutes(rows, batchId) {
      if (rows.length > 0) await batches.addUsageMinutes(rows, batchId);
    },
    async listUsageMinutes(q) {
      // In row order, the order the cursor of a page is compared in.
      let read = k.selectFrom(tableOf(q)).selectAll().where(usageFilter(q));
      for (const col of USAGE_CELL) read = read.orderBy(col);
      if (q.limit !== undefined) read = read.limit(q.limit);
      return (await read.execute()).map((r) => usageMinuteFromRow(r, codec));
    },
    async countUsageMinutes(q, cap) {
      // The inner LIMIT stops the scan at `cap` rows: a refused analytics query costs one bounded count, not a read.
      // The same filters as the read, unordered (a count needs no order), so the same index answers it.
      const capped = k.selectFrom(tableOf(q)).select(sql.lit(1).as('one')).where(usageFilter({ ...q, after: undefined })).limit(cap);
      const row = await k.selectFrom(capped.as('capped')).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async sumUsageMinutes(q) {
      const row = await k.selectFrom(tableOf(q))
        .select((eb) => [
          eb.fn.coalesce(eb.fn.sum('requests'), eb.lit(0)).as('requests'),
          eb.fn.coalesce(eb.fn.sum(eb.case().when('code', '<>', eb.lit(0)).then(eb.ref('requests')).else(eb.lit(0)).end()), eb.lit(0)).as('errors'),
          eb.fn.coalesce(eb.fn.sum('compute_units'), eb.lit(0)).as('compute_units'),
        ])
        .where(usageFilter({ ...q, after: undefined }))
        .executeTakeFirstOrThrow();
      return { requests: Number(row.requests), errors: Number(row.errors), computeUnits: Number(row.compute_units) };
    },
    async summarizeUsage(q) {
      // The rows selected once (a CTE materialized: for minutes it is two tables' ranges), then one group-by per
      // dimension over them, in one statement.
      const selected = k.with((cte) => cte('selected').materialized(), (w) => w.selectFrom(tableOf(q)).selectAll().where(usageFilter({ ...q, after: undefined })));
      const per = (from: typeof selected | typeof k, [by, col]: (typeof DIMENSIONS)[number]) => (from as typeof selected).selectFrom('selected')
        .select((eb) => [
          sql.lit(by).as('by'), eb.cast<string>(eb.ref(col), 'text').as('value'),
          ...USAGE_SUMMED.map((c) => eb.fn.sum<number>(c).as(c)),
          eb.fn.sum<number>(eb.case().when('code', '<>', eb.lit(0)).then(eb.ref('requests')).else(eb.lit(0)).end()).as('errors'),
        ])
        .groupBy(col);
      // The first branch carries the WITH; the others name the CTE, which the whole statement sees.
      let all = per(selected, DIMENSIONS[0]);
      for (const d of DIMENSIONS.slice(1)) all = all.unionAll(per(k, d));
      const rows = await all.execute();
      return rows.map((r) => ({
        by: r.by as UsageDimension, value: String(r.value), requests: codec.big(r.requests), computeUnits: codec.big(r.compute_units),
        errors: codec.big(r.errors), latencyMsSum: codec.big(r.latency_ms_sum), latency: [r.l0, r.l1, r.l2, r.l3, r.l4, r.l5].map(codec.big),
      }));
    },
    async topAccounts(q, limit) {
      // First the accounts, by one sum (added up across a month of every account's rows, each further sum cost as
      // much again); then their sums, by the account index.
      const filter = usageFilter({ ...q, accountId: undefined, after: undefined });
      const top = await k.selectFrom(tableOf(q))
        .select((eb) => ['account_id', eb.fn.sum<number>('requests').as('requests')])
        .where(filter).groupBy('account_id').orderBy('requests', 'desc').orderBy('account_id').limit(limit)
        .execute();
      if (top.length === 0) return [];
      const rows = await k.selectFrom(tableOf(q))
        .select((eb) => [
          'account_id',
          ...USAGE_SUMMED.map((col) => eb.fn.sum<number>(col).as(col)),
          eb.fn.sum<number>(eb.case().when('code', '<>', eb.lit(0)).then(eb.ref('requests')).else(eb.lit(0)).end()).as('errors'),
        ])
        .where(filter).where('account_id', 'in', top.map((t) => t.account_id)).groupBy('account_id')
        .execute();
      const by = new Map(rows.map((r) => [r.account_id, r]));
      return top.map((t) => by.get(t.account_id)!).map((r) => ({
        ...usageMinuteFromRow({ ...r, minute: q.from, key_id: '', network: '', method: '', code: 0 }, codec),
        errors: codec.big(r.errors),
      }));
    },
    async pruneUsageMinutes(before) {
      for (const table of Object.values(USAGE_TABLES)) await k.deleteFrom(table as 'usage_minutes').where('minute', '<', before).execute();
    },
    async rollUp(before) {
      return maintenanceWrite(db, async (q) => {
        // Locked for the roll-up's length: a flush reads the first minute not rolled up under a share lock (usage-batches.ts).
        // Made first if it is missing (a store that lost it), so that there is a row to lock: '' (nothing rolled up).
        await q.insertInto('meta').values({ name: HOURS_FROM, value: '' }).onConflict((oc) => oc.column('name').doNothing()).execute();
        let mark = q.selectFrom('meta').select('value').where('name', '=', HOURS_FROM);
        if (db.dialect === 'postgres') mark = mark.forUpdate();
        const from = (await mark.executeTakeFirst())?.value ?? '';
        const moveTo = (value: string) => q.insertInto('meta').values({ name: HOURS_FROM, value })
          .onConflict((oc) => oc.column('name').doUpdateSet({ value })).execute();
        // The first minute with rows: minutes without calls are passed over at once.
        const first = await q.selectFrom('usage_minutes').select('minute').where('minute', '>=', from).orderBy('minute').limit(1).executeTakeFirst();
        if (!first || first.minute >= before) {
          if (before > from) await moveTo(before);
          return undefined;
        }
        const { hour, next: hourEnd } = hourOf(first.minute);
        const next = hourEnd < before ? hourEnd : before;
        for (const grain of ['hour', 'day'] as const) {
          const table = USAGE_TABLES[grain] as 'usage_minutes';
          // Every minute rolled up falls in one bucket of each grain. In key order, as flushes write (no deadlock).
          await q.insertInto(table).columns(USAGE_COLUMNS)
            .expression((eb) => eb.selectFrom('usage_minutes')
              // A cast, so that PostgreSQL knows the parameter's type in a select list.
              .select([sql<string>`cast(${grainStart(hour, grain)} as text)`.as('minute'), 'account_id', 'key_id', 'network', 'method', 'code'])
              .select((s) => USAGE_SUMMED.map((col) => s.fn.sum<number>(col).as(col)))
              .where('minute', '>=', first.minute).where('minute', '<', next)
              .groupBy(['account_id', 'key_id', 'network', 'method', 'code'])
              .orderBy('key_id').orderBy('network').orderBy('method').orderBy('code'))
            .onConflict((oc) => addUpUsage(oc, table))
            .execute();
        }
        await moveTo(next);
        return { from: first.minute, to: next };
      });
    },
    async dropMinuteHour(before) {
      // Marked first, in the same transaction as the delete: a read that sees the rows gone also reads their hours.
      const mark = (q: Q) => q.insertInto('meta').values({ name: MINUTES_FROM, value: before })
        .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({
          value: eb.case().when(eb.ref('excluded.value'), '>', eb.ref('meta.value')).then(eb.ref('excluded.value')).else(eb.ref('meta.value')).end(),
        })))
        .execute();
      // Only hours rolled up whole: the others' calls are not all in their hour rows yet.
      const rolled = (await k.selectFrom('meta').select('value').where('name', '=', HOURS_FROM).executeTakeFirst())?.value ?? '';
      const rolledHours = rolled === '' ? '' : hourOf(rolled).hour;
      if (rolledHours < before) before = rolledHours;
      const first = await k.selectFrom('usage_minutes').select('minute').where('minute', '<', before).orderBy('minute').limit(1).executeTakeFirst();
      if (!first) {
        await maintenanceWrite(db, mark);
        return undefined;
      }
      const { hour, next } = hourOf(first.minute);
      const removed = await maintenanceWrite(db, async (q) => {
        await mark(q);
        return SqlDb.changed(await q.deleteFrom('usage_minutes').where('minute', '>=', hour).where('minute', '<', next).where('minute', '<', before).execute());
      });
      return { hour, removed };
    },
  };
}
