import { sql } from 'kysely';
import { isoTime } from '../sql/codec.ts';
import { SqlDb } from '../sql/sql-db.ts';
import type { RequestLogTable } from '../sql/tables.ts';
import type { RequestQuery, RequestRecord } from './request-record.ts';

export type { RequestQuery, RequestRecord } from './request-record.ts';

/** Rows per INSERT on SQLite: 16 values a row, far below its 32,766 variables a statement. */
const ROWS_PER_INSERT = 500;
/** Accounts named in one statement (a flush names thousands): far below either dialect's bound on parameters. */
const ACCOUNTS_PER_STATEMENT = 1000;

/** What an account's write drops: its `oldest` records (past its count bound), and those from before `since` (ISO time). */
export interface RequestTrim { oldest: number; since: string }

/** The request explorer's records: written in batches, read newest first, kept within each account's bounds. */
export interface RequestStore {
  /**
   * Writes a batch and drops, per account of `trims`, its oldest records and its records past their time, in one
   * transaction; answers per account how many went for their age (absent: none). The oldest are dropped per account
   * (only accounts past their count bound have any); the aged, for all accounts of the same `since` at once, in one
   * statement per ACCOUNTS_PER_STATEMENT accounts.
   */
  addRequests(records: readonly RequestRecord[], trims: ReadonlyMap<string, RequestTrim>): Promise<Map<string, number>>;
  /** Records matching `q`, newest first, at most `q.limit`. */
  listRequests(q: RequestQuery): Promise<RequestRecord[]>;
  /** Records from before `before` (every account), for accounts that made none since (answers how many went). */
  pruneRequests(before: string): Promise<number>;
  /** How many records the account has (absent: all accounts). */
  countRequests(accountId?: string): Promise<number>;
  /** How many records each of `accountIds` has (absent: none), in one read per ACCOUNTS_PER_STATEMENT accounts. */
  countRequestsOf(accountIds: readonly string[]): Promise<Map<string, number>>;
}

/** The request store on a database. */
export function requestStore(db: SqlDb): RequestStore {
  const { k, codec } = db;
  const fromRow = (r: RequestLogTable & { id: string | number }): RequestRecord => ({
    id: String(r.id), at: codec.time(r.at), accountId: r.account_id, keyId: r.key_id, network: r.network, method: r.method,
    code: Number(r.code), message: r.message, latencyMs: Number(r.latency_ms), computeUnits: Number(r.compute_units),
    requestBytes: Number(r.request_bytes), responseBytes: Number(r.response_bytes), cache: r.cache, node: r.node,
    requestId: r.request_id, params: r.params, sampleEvery: Number(r.sample_every),
  });
  return {
    async addRequests(records, trims) {
      const aged = new Map<string, number>();
      if (records.length === 0 && trims.size === 0) return aged;
      await db.write(async (q) => {
        if (db.dialect === 'postgres') {
          if (records.length > 0) {
            // One statement, the records as one JSON parameter (encoded natively; a thousand rows of 16 values as
            // parameters cost this process their building and encoding each second), in their order (ids follow it).
            const rows = JSON.stringify(records.map((r) => [r.at, r.accountId, r.keyId, r.network, r.method, r.code, r.message, r.latencyMs,
              r.computeUnits, r.requestBytes, r.responseBytes, r.cache, r.node, r.requestId, r.params, r.sampleEvery]));
            await sql`INSERT INTO request_log (at, account_id, key_id, network, method, code, message, latency_ms, compute_units,
                request_bytes, response_bytes, cache, node, request_id, params, sample_every)
              SELECT (e->>0)::timestamptz, e->>1, e->>2, e->>3, e->>4, (e->>5)::int, e->>6, (e->>7)::double precision, (e->>8)::int,
                (e->>9)::int, (e->>10)::int, e->>11, e->>12, e->>13, e->>14, (e->>15)::int
              FROM jsonb_array_elements(${rows}::jsonb) WITH ORDINALITY AS x (e, n) ORDER BY n`.execute(q);
          }
        } else {
          for (let i = 0; i < records.length; i += ROWS_PER_INSERT) {
            await q.insertInto('request_log').values(records.slice(i, i + ROWS_PER_INSERT).map((r) => ({
              at: isoTime(r.at), account_id: r.accountId, key_id: r.keyId, network: r.network, method: r.method, code: r.code,
              message: r.message, latency_ms: r.latencyMs, compute_units: r.computeUnits, request_bytes: r.requestBytes,
              response_bytes: r.responseBytes, cache: r.cache, node: r.node, request_id: r.requestId, params: r.params, sample_every: r.sampleEvery,
            }))).execute();
          }
        }
        const bySince = new Map<string, string[]>();
        for (const [accountId, t] of trims) {
          if (t.oldest > 0) {
            // The newest of the `oldest` records: it and every older one of the account go.
            const edge = await q.selectFrom('request_log').select('id').where('account_id', '=', accountId)
              .orderBy('id', 'asc').offset(t.oldest - 1).limit(1).executeTakeFirst();
            if (edge) await q.deleteFrom('request_log').where('account_id', '=', accountId).where('id', '<=', edge.id).execute();
          }
          const same = bySince.get(t.since);
          if (same) same.push(accountId);
          else bySince.set(t.since, [accountId]);
        }
        for (const [since, ids] of bySince) {
          for (let i = 0; i < ids.length; i += ACCOUNTS_PER_STATEMENT) {
            const gone = await q.deleteFrom('request_log').where('account_id', 'in', ids.slice(i, i + ACCOUNTS_PER_STATEMENT))
              .where('at', '<', isoTime(since)).returning('account_id').execute();
            for (const r of gone) aged.set(r.account_id, (aged.get(r.account_id) ?? 0) + 1);
          }
        }
      });
      return aged;
    },
    async listRequests(f) {
      let q = k.selectFrom('request_log').selectAll();
      if (f.accountId !== undefined) q = q.where('account_id', '=', f.accountId);
      if (f.requestId !== undefined) q = q.where('request_id', '=', f.requestId);
      if (f.keyId !== undefined) q = q.where('key_id', '=', f.keyId);
      if (f.network !== undefined) q = q.where('network', '=', f.network);
      if (f.method !== undefined) q = q.where('method', '=', f.method);
      if (f.outcome === 'ok') q = q.where('code', '=', 0);
      else if (f.outcome === 'error') q = q.where('code', '!=', 0);
      else if (f.outcome !== undefined) q = q.where('code', '=', f.outcome);
      if (f.from !== undefined) q = q.where('at', '>=', isoTime(f.from));
      if (f.to !== undefined) q = q.where('at', '<', isoTime(f.to));
      if (f.before !== undefined) q = q.where('id', '<', f.before);
      const rows = await q.orderBy('id', 'desc').limit(f.limit).execute();
      return rows.map((r) => fromRow(r as RequestLogTable & { id: string | number }));
    },
    async pruneRequests(before) {
      return SqlDb.changed(await k.deleteFrom('request_log').where('at', '<', isoTime(before)).executeTakeFirst());
    },
    async countRequests(accountId) {
      let q = k.selectFrom('request_log').select((eb) => eb.fn.countAll<number | string>().as('n'));
      if (accountId !== undefined) q = q.where('account_id', '=', accountId);
      return Number((await q.executeTakeFirstOrThrow()).n);
    },
    async countRequestsOf(accountIds) {
      const out = new Map<string, number>();
      for (let i = 0; i < accountIds.length; i += ACCOUNTS_PER_STATEMENT) {
        const rows = await k.selectFrom('request_log').select((eb) => ['account_id', eb.fn.countAll<number | string>().as('n')])
          .where('account_id', 'in', accountIds.slice(i, i + ACCOUNTS_PER_STATEMENT)).groupBy('account_id').execute();
        for (const r of rows) out.set(r.account_id, Number(r.n));
      }
      return out;
    },
  };
}
