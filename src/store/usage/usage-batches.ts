import { randomUUID } from 'node:crypto';
import { sql, type Expression, type OnConflictBuilder, type QueryCreator } from 'kysely';
import { SqlDb } from '../sql/sql-db.ts';
import type { Big, Q, Tables, Time, UsageMinutesTable } from '../sql/tables.ts';
import { addUpUsage, EVERYONE, HOURS_FROM, rowsAtGrain, USAGE_CELL, USAGE_COLUMNS, USAGE_SUMMED, USAGE_TABLES, usageMinuteRow, type UsageGrain } from './usage-rows.ts';
import type { UsageMinute } from './usage-minute.ts';

/**
 * The usage flushes, the one place the dialects write differently. On PostgreSQL a batch is one statement (its
 * rows as one parameter): one round trip and one transaction whatever its size, its batch id claimed in the same
 * statement. SQLite has neither arrays nor data-modifying CTEs: there a batch is a loop in one write transaction
 * (BEGIN IMMEDIATE), its batch id claimed first, and the loop costs no round trip on an embedded database.
 */
export interface UsageBatches {
  /** Answers the totals written, in the order of `ids` (usage-store.ts addUsage). */
  addUsage(month: string, ids: readonly string[], units: readonly number[], batchId?: string): Promise<Array<number | undefined>>;
  addUsageMinutes(rows: readonly UsageMinute[], batchId?: string): Promise<void>;
}

const DAY = 86_400_000;
/** SQLite rows per INSERT: 15 values a row, far below its 32,766 variables a statement. */
const ROWS_PER_INSERT = 500;
/** The SQL type of each usage column, as PostgreSQL reads it out of a flush's JSON. */
const PG_TYPES: Record<(typeof USAGE_COLUMNS)[number], string> = {
  minute: 'text', account_id: 'text', key_id: 'text', network: 'text', method: 'text', code: 'int',
  requests: 'bigint', compute_units: 'bigint', latency_ms_sum: 'bigint', l0: 'bigint', l1: 'bigint', l2: 'bigint', l3: 'bigint', l4: 'bigint', l5: 'bigint',
};

/**
 * The rows of one flush on PostgreSQL, after its batch id is claimed (`fresh`): the minute rows come as one JSON
 * array of arrays (JSON.stringify is native; 15 PostgreSQL arrays encoded element by element cost this process about
 * 20 times the CPU a row, bench/scale/writes.ts), everyone's rows of each minute are added up from them, and, for the
 * minutes already rolled up (`rolled`: a late flush), the hour and day rows from both, by the database, in
 * the same statement. Each INSERT goes in its key's order, so concurrent flushes (everyone's rows are shared by every
 * instance) lock rows in one order.
 */
const PG_FLUSH = (() => {
  const cols = USAGE_COLUMNS.join(', ');
  const cell = USAGE_CELL.join(', ');
  const sums = USAGE_SUMMED.map((c) => `sum(${c})`).join(', ');
  const atGrain = (bucket: string) => `SELECT ${bucket}, account_id, key_id, network, method, code, ${sums} FROM minutes
    WHERE minute < (SELECT value FROM rolled) GROUP BY 1, account_id, key_id, network, method, code ORDER BY 1, key_id, network, method, code`;
  // The cells' columns read out of the JSON, everyone's rows of each minute with them, and each grain's rows to write.
  return {
    columns: USAGE_COLUMNS.map((c, i) => `(e->>${i})::${PG_TYPES[c]} AS ${c}`).join(', '),
    minutes: `SELECT ${cols} FROM cells UNION ALL SELECT minute, '${EVERYONE}', '${EVERYONE}', network, method, code, ${sums} FROM cells
      WHERE account_id <> '${EVERYONE}' GROUP BY minute, network, method, code`,
    hour: atGrain("left(minute, 13) || ':00'"),
    day: atGrain("left(minute, 10) || 'T00:00'"),
    minute: `SELECT ${cols} FROM minutes ORDER BY ${cell}`,
  };
})();

/** A minute row as PG_FLUSH's JSON holds it: its columns in USAGE_COLUMNS' order. */
const flushRow = (u: UsageMinute) => [u.minute, u.accountId, u.keyId, u.network, u.method, u.code, u.requests, u.computeUnits, u.latencyMsSum, ...u.latency];

/** Batch ids older than a day go: a retry comes within seconds. */
const forgetOldBatches = (q: QueryCreator<Tables>, cutoff: Expression<Time> | string) => q.deleteFrom('usage_batches').where('at', '<', cutoff);
/** Records a batch id unless it is there: whoever inserts it applies the batch. */
const claimBatch = (q: QueryCreator<Tables>, id: string, at: Expression<Time> | string) =>
  q.insertInto('usage_batches').values({ id, at }).onConflict((oc) => oc.column('id').doNothing());

/** Adds an account's units of a month to what is there. */
const addUnits = (oc: OnConflictBuilder<Tables, 'usage'>) =>
  oc.columns(['account_id', 'month']).doUpdateSet((eb) => ({ compute_units: eb('usage.compute_units', '+', eb.ref('excluded.compute_units')) }));

/**
 * A flush's rows to write at `grain`: the minute rows themselves and everyone's; above, the cells' and everyone's
 * buckets of the minutes before `hoursFrom` (hours already rolled up: a late flush adds to them itself).
 */
const grainRows = (rows: readonly UsageMinute[], grain: UsageGrain, hoursFrom: string) => (grain === 'minute'
  ? [...rows, ...rowsAtGrain(rows, 'minute')]
  : rowsAtGrain(rows.filter((r) => r.minute < hoursFrom), grain));

export function usageBatches(db: SqlDb): UsageBatches {
  return db.dialect === 'postgres' ? postgresBatches(db) : sqliteBatches(db);
}

function postgresBatches({ k, codec }: SqlDb): UsageBatches {
  // Once per batch id: the id is inserted by the statement that applies the batch, and a batch already applied (its
  // id there) adds nothing; a retry racing the original waits on the id's row, then adds nothing. A batch without an
  // id gets one, so every batch takes the same path. Ids older than a day go in the same statement, by the server's clock.
  const once = (batchId: string | undefined) => k
    .with('old', (w) => forgetOldBatches(w, sql<Time>`now() - interval '1 day'`))
    .with('fresh', (w) => claimBatch(w, batchId ?? randomUUID(), sql<Time>`now()`).returning('id'));
  // Rows in account order (byte order: the same on every database and instance), so that concurrent flushes lock rows
  // in one order and never deadlock. Accounts that are gone are skipped (as touchKeys skips keys): one stale entry
  // must not lose the batch. The totals come back as one text in the order of `ids` (empty where nothing was
  // written): a row per account cost this process an object, a parse and a map entry each. Compiled once, its three
  // parameters placed by sentinel values: building it anew cost a flush of 2,000 accounts as much as its rows.
  const [ID, PAIRS, MONTH] = ['\u0000id', '\u0000pairs', '\u0000month'];
  const quotaWrite = once(ID)
    .with('v', () => sql<{ id: string; units: Big; n: Big }>`(SELECT e->>0 AS id, (e->>1)::bigint AS units, n FROM jsonb_array_elements(${PAIRS}::jsonb) WITH ORDINALITY AS x (e, n))`)
    .with('ins', (w) => w.insertInto('usage').columns(['account_id', 'month', 'compute_units'])
      .expression((eb) => eb.selectFrom('v').innerJoin('accounts as a', 'a.id', 'v.id')
        // The month typed: PostgreSQL cannot tell a bare parameter's type in a select list.
        .select(['v.id', eb.cast<string>(eb.val(MONTH), 'text').as('month'), 'v.units'])
        .where(({ exists, selectFrom }) => exists(selectFrom('fresh').select('fresh.id')))
        .orderBy(sql`v.id COLLATE "C"`))
      .onConflict(addUnits)
      .returning(['usage.account_id', 'usage.compute_units']))
    .selectFrom('v').leftJoin('ins', 'ins.account_id', 'v.id')
    .select(sql<string | null>`string_agg(coalesce(ins.compute_units::text, ''), ',' ORDER BY v.n)`.as('totals'))
    .compile();
  const at = [ID, PAIRS, MONTH].map((x) => quotaWrite.parameters.indexOf(x));
  if (at.includes(-1) || quotaWrite.parameters.length !== 3) throw new Error('the quota write\'s parameters are not where they were put');
  return {
    async addUsage(month, ids, units, batchId) {
      const parameters: unknown[] = [];
      parameters[at[0]] = batchId ?? randomUUID();
      parameters[at[1]] = JSON.stringify(ids.map((id, i) => [id, units[i]]));
      parameters[at[2]] = month;
      const { rows } = await k.executeQuery<{ totals: string | null }>({ ...quotaWrite, parameters });
      const totals = rows[0]?.totals?.split(',') ?? [];
      return ids.map((_, i) => (totals[i] ? codec.big(totals[i]) : undefined));
    },
    async addUsageMinutes(rows, batchId) {
      // Every grain's rows in the one statement that claims the batch: each grain counts the batch once, or none does.
      // (A raw body of a CTE is written as it is: its parentheses are its own.) The first minute not rolled up is read
      // under a share lock, which the roll-up's update waits for: either the roll-up reads this flush's minute rows,
      // or this flush reads the minute it moved to and adds its earlier minutes to their hours itself; never both, never
      // neither.
      const q = PG_FLUSH;
      const json = JSON.stringify(rows.map(flushRow));
      // The rows of one grain, added to those there.
      const write = (w: QueryCreator<Tables>, grain: UsageGrain) => w.insertInto(USAGE_TABLES[grain] as 'usage_minutes').columns(USAGE_COLUMNS)
        .expression(sql.raw(q[grain])).onConflict((oc) => addUpUsage(oc, USAGE_TABLES[grain]));
      await write(once(batchId)
        .with((cte) => cte('cells').materialized(), () => sql<UsageMinutesTable>`(SELECT ${sql.raw(q.columns)} FROM jsonb_array_elements(${json}::jsonb) AS e
          WHERE EXISTS (SELECT 1 FROM fresh))`)
        .with((cte) => cte('minutes').materialized(), () => sql.raw<UsageMinutesTable>(`(${q.minutes})`))
        .with('rolled', (w) => w.selectFrom('meta').select('value').where('name', '=', HOURS_FROM).forShare())
        .with('hours', (w) => write(w, 'hour'))
        .with('days', (w) => write(w, 'day')), 'minute')
        .execute();
    },
  };
}

function sqliteBatches(db: SqlDb): UsageBatches {
  /** Whether the batch is new: then its id is recorded, inside the caller's transaction, and it is to be applied. */
  const firstTime = async (q: Q, batchId: string | undefined) => {
    if (batchId === undefined) return true;
    const at = Date.now();
    await forgetOldBatches(q, new Date(at - DAY).toISOString()).execute();
    const claimed = await claimBatch(q, batchId, new Date(at).toISOString()).executeTakeFirst();
    return SqlDb.changed(claimed) > 0;
  };
  return {
    addUsage: (month, ids, units, batchId) => db.write(async (q) => {
      const totals: Array<number | undefined> = new Array(ids.length).fill(undefined);
      if (!(await firstTime(q, batchId))) return totals;
      // Accounts that are gone are skipped: one stale entry must not lose the batch.
      for (const [i, id] of ids.entries()) {
        const row = await q.insertInto('usage').columns(['account_id', 'month', 'compute_units'])
          .expression((eb) => eb.selectFrom('accounts').select(['id', eb.val(month).as('month'), eb.val(units[i]).as('units')]).where('id', '=', id))
          .onConflict(addUnits)
          .returning(['account_id', 'compute_units'])
          .executeTakeFirst();
        if (row) totals[i] = db.codec.big(row.compute_units);
      }
      return totals;
    }),
    addUsageMinutes: (rows, batchId) => db.write(async (q) => {
      if (!(await firstTime(q, batchId))) return;
      const hoursFrom = (await q.selectFrom('meta').select('value').where('name', '=', HOURS_FROM).executeTakeFirst())?.value ?? '';
      for (const grain of ['minute', 'hour', 'day'] as const) {
        const table = USAGE_TABLES[grain];
        const all = grainRows(rows, grain, hoursFrom);
        for (let i = 0; i < all.length; i += ROWS_PER_INSERT) {
          await q.insertInto(table as 'usage_minutes').values(all.slice(i, i + ROWS_PER_INSERT).map(usageMinuteRow)).onConflict((oc) => addUpUsage(oc, table)).execute();
        }
      }
    }),
  };
}
