/**
 * The history section of `npm run bench -- scale`: a year of usage of 100,000 accounts in PostgreSQL, made by the
 * server itself (generate_series) at the grains Nodegate keeps (minute rows of the last day, hour and day rows of the
 * year, everyone's rows added up from them), Nodegate started on it with a year's retention, then each view the
 * dashboard's usage page offers (last hour, 24 hours, 7 days, 30 days) asked in turn, for the largest account (its
 * own key with `analytics`), for the operator of everyone, and for the operator of that account: p50 and p99.
 *   SCALE_SECTIONS=history npm run bench -- scale
 *   SCALE_HISTORY_URL=postgres://…/db SCALE_SECTIONS=history npm run bench -- scale   (a database built before, kept)
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { startNodegate } from '../../test/helpers/process.ts';
import type { BenchTargets } from '../bench-targets.ts';
import { printTable } from '../rpc-throughput.ts';
import { CHAIN_ID } from '../targets.ts';
import { buildKeyState, SCALE_PLAN } from './key-state.ts';
import { HOURS_FROM } from '../../src/store/usage/usage-rows.ts';

const ACCOUNTS = 100_000;
/** The largest account's keys (keys 0 … 19): each calls 6 methods on 2 networks every hour of the year, and errs on one. */
const BIG_KEYS = 20;
const METHODS = ['eth_call', 'eth_getBalance', 'eth_blockNumber', 'eth_getLogs', 'eth_getTransactionReceipt', 'eth_chainId'];
/** Every other account calls on one day in 20 (5,000 a day), in 2 hours of it, one cell. */
const ACTIVE_EVERY = 20;
const ACTIVE_HOURS = 2;
const ASKS = 30;
const RANGES: Array<[string, number]> = [['1 hour', 3_600_000], ['24 hours', 86_400_000], ['7 days', 7 * 86_400_000], ['30 days', 30 * 86_400_000]];

const SUMMED = 'requests, compute_units, latency_ms_sum, l0, l1, l2, l3, l4, l5';
const SUMS = SUMMED.split(', ').map((c) => `sum(${c})`).join(', ');
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** How many rows each usage table of a database built before holds. */
async function countRows(url: string): Promise<Record<string, number>> {
  const db = new pg.Client(url);
  await db.connect();
  try {
    const out: Record<string, number> = {};
    for (const table of ['usage_minutes', 'usage_hours', 'usage_days']) out[table] = Number((await db.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    return out;
  } finally {
    await db.end();
  }
}

/** A year of usage rows at every grain, ending now; answers how many rows each table got. */
export async function buildHistory(url: string): Promise<Record<string, number>> {
  const db = new pg.Client(url);
  await db.connect();
  try {
    // The cells of the largest account (its keys × networks × methods, and each key's -32005 on eth_call) and of
    // every other account (one key, eth_call on mainnet), with the counts each bucket of them holds.
    await db.query(`CREATE TEMP TABLE big_cells AS
      SELECT 'acct0' AS account_id, 'key' || k AS key_id, n AS network, m AS method, 0 AS code FROM generate_series(0, ${BIG_KEYS - 1}) k,
        unnest(ARRAY['mainnet', 'sepolia']) n, unnest($1::text[]) m
      UNION ALL SELECT 'acct0', 'key' || k, 'mainnet', 'eth_call', -32005 FROM generate_series(0, ${BIG_KEYS - 1}) k`, [METHODS]);
    const insert = (table: string, minutes: string, cells: string, requests: string) => db.query(`INSERT INTO ${table} (minute, account_id, key_id, network, method, code, ${SUMMED})
      SELECT to_char(t, 'YYYY-MM-DD"T"HH24:MI'), c.account_id, c.key_id, c.network, c.method, c.code,
             ${requests}, ${requests} * 26, ${requests} * 3, ${requests}, 0, 0, 0, 0, 0
      FROM ${minutes} AS t, ${cells} AS c`);
    const now = `date_trunc('minute', now() AT TIME ZONE 'UTC')`;
    const hour = `date_trunc('hour', now() AT TIME ZONE 'UTC')`;
    const day = `date_trunc('day', now() AT TIME ZONE 'UTC')`;
    await insert('usage_minutes', `generate_series(${now} - interval '1439 minutes', ${now}, interval '1 minute')`, 'big_cells', '4');
    await insert('usage_hours', `generate_series(${hour} - interval '365 days', ${hour}, interval '1 hour')`, 'big_cells', '240');
    await insert('usage_days', `generate_series(${day} - interval '365 days', ${day}, interval '1 day')`, 'big_cells', '5760');
    // The others: account i calls on the days d with (i + d) % 20 = 0 (d: the day of the year), in hours 9 and 10
    // (UTC), 60 calls a minute. Each day's accounts are drawn by a series of their own (a step of 20), not filtered.
    const others = (grain: string, minutes: string, requests: number) => db.query(`INSERT INTO ${grain} (minute, account_id, key_id, network, method, code, ${SUMMED})
      SELECT to_char(t, 'YYYY-MM-DD"T"HH24:MI'), 'acct' || i, 'key' || (${BIG_KEYS} + i), 'mainnet', 'eth_call', 0,
             ${requests}, ${requests} * 26, ${requests} * 3, ${requests}, 0, 0, 0, 0, 0
      FROM generate_series(${day} - interval '365 days', ${day}, interval '1 day') AS d,
        LATERAL generate_series((${ACTIVE_EVERY} - extract(doy FROM d)::int % ${ACTIVE_EVERY}) % ${ACTIVE_EVERY}, ${ACCOUNTS - 1}, ${ACTIVE_EVERY}) AS i,
        LATERAL (${minutes}) AS m (t)
      WHERE i >= 1 AND t <= ${now}`);
    const hours = `SELECT d + h * interval '1 hour' FROM generate_series(9, ${8 + ACTIVE_HOURS}) AS h`;
    await others('usage_days', 'SELECT d', 60 * 60 * ACTIVE_HOURS);
    await others('usage_hours', hours, 3600);
    await others('usage_minutes', `SELECT d + h * interval '1 hour' + x * interval '1 minute' FROM generate_series(9, ${8 + ACTIVE_HOURS}) AS h, generate_series(0, 59) AS x
      WHERE d >= ${day} - interval '1 day' AND d + h * interval '1 hour' + x * interval '1 minute' > ${now} - interval '1440 minutes'`, 60);
    // As a store whose roll-ups are on time (every 5 minutes): the last 5 minutes' calls not rolled up yet, so reports
    // add up their minute rows as they do in service. (The rows hold whole hours and days as built.)
    await db.query(`INSERT INTO meta (name, value) VALUES ('${HOURS_FROM}', to_char(${now} - interval '5 minutes', 'YYYY-MM-DD"T"HH24:MI'))
      ON CONFLICT (name) DO UPDATE SET value = excluded.value`);
    const out: Record<string, number> = {};
    for (const table of ['usage_minutes', 'usage_hours', 'usage_days']) {
      await db.query(`INSERT INTO ${table} (minute, account_id, key_id, network, method, code, ${SUMMED})
        SELECT minute, '', '', network, method, code, ${SUMS} FROM ${table} GROUP BY minute, network, method, code`);
      out[table] = Number((await db.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    }
    await db.query('ANALYZE');
    return out;
  } finally {
    await db.end();
  }
}

export async function scaleHistory(targets: BenchTargets): Promise<void> {
  const anvil = await targets.anvil();
  // SCALE_HISTORY_URL: a database this section built before (kept, not dropped), to measure again without building.
  const kept = process.env.SCALE_HISTORY_URL;
  const state = kept ? { url: kept, drop: async () => {} } : await buildKeyState(ACCOUNTS, ACCOUNTS + BIG_KEYS, BIG_KEYS);
  let proc: Awaited<ReturnType<typeof startNodegate>> | undefined;
  try {
    const t0 = performance.now();
    const rows = kept ? await countRows(kept) : await buildHistory(state.url);
    const buildS = (performance.now() - t0) / 1000;
    const { id: _, ...plan } = SCALE_PLAN;
    proc = await startNodegate({
      // A store started before prints no key: this section makes its own.
      ...(kept ? { key: 'ngk_none' } : {}),
      env: { REDIS_URL: '', DATABASE_URL: state.url, NODEGATE_LOG_LEVEL: 'warn', NODEGATE_WORKERS: '' },
      config: {
        networks: { mainnet: { chainId: CHAIN_ID, upstream: anvil.url } },
        plans: { scale: plan }, accounts: { defaultPlan: 'scale' },
        analytics: { retentionDays: 400 },
      },
    });
    // A key of the largest account with `analytics`, and one of the operator with `operator`, as another writer of
    // the store adds them (hashes as the store keeps them).
    const member = `ngk_${randomBytes(16).toString('hex')}`;
    const operator = `ngk_${randomBytes(16).toString('hex')}`;
    const db = new pg.Client(state.url);
    await db.connect();
    try {
      for (const [id, value, account, permissions] of [['history-member', member, `'acct0'`, ['analytics']], ['history-operator', operator, `(SELECT id FROM accounts WHERE role = 'operator' LIMIT 1)`, ['analytics', 'operator']]] as const) {
        await db.query(`INSERT INTO api_keys (id, account_id, name, type, permissions, prefix, hash, created_at)
          VALUES ($1, ${account}, $1, 'Restricted', $3, left($2, 8), encode(sha256(convert_to($2, 'UTF8')), 'hex'), now())
          ON CONFLICT (id) DO UPDATE SET account_id = excluded.account_id, prefix = excluded.prefix, hash = excluded.hash, changed_at = now()`, [id, value, permissions]);
      }
    } finally {
      await db.end();
    }
    const base = `${new URL(proc.url).origin}/api/v1`;
    const ask = async (path: string, key: string) => {
      const t = performance.now();
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
      const body = await res.json() as { totals?: { requests: number }; byAccount?: unknown[]; error?: unknown };
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
      return { ms: performance.now() - t, requests: body.totals!.requests, accounts: body.byAccount!.length };
    };
    // The key's and the operator's first answers (their lookups) are not what is measured.
    for (let tries = 0; ; tries++) {
      try { await ask('/analytics', member); await ask('/operator/analytics', operator); break; } catch (err) { if (tries > 20) throw err; await new Promise((r) => setTimeout(r, 250)); }
    }
    const views: Array<[string, string, string]> = [
      ['largest account (its key)', '/analytics', member],
      ['operator, everyone', '/operator/analytics', operator],
      ['operator, largest account', '/operator/analytics?accountId=acct0', operator],
    ];
    const table: string[][] = [];
    for (const [who, path, key] of views) {
      for (const [name, span] of RANGES) {
        const times: number[] = [];
        let last = { requests: 0, accounts: 0 };
        for (let i = 0; i < ASKS + 3; i++) {
          const from = new Date(Date.now() - span).toISOString();
          const r = await ask(`${path}${path.includes('?') ? '&' : '?'}from=${from}`, key);
          if (i >= 3) times.push(r.ms);
          last = r;
        }
        table.push([who, name, last.requests.toLocaleString('en-US'), String(last.accounts), pct(times, 50).toFixed(1), pct(times, 99).toFixed(1)]);
      }
    }
    const f = (x: number) => x.toLocaleString('en-US');
    console.log(`\nScale, history: ${f(ACCOUNTS)} accounts, a year of usage in PostgreSQL (${kept ? 'built before' : `built in ${buildS.toFixed(0)} s`}): ${Object.entries(rows).map(([t, n]) => `${t} ${f(n)} rows`).join(', ')}; `
      + `the largest account: ${BIG_KEYS} keys × 2 networks × ${METHODS.length} methods and one error each, every hour; the others 1 day in ${ACTIVE_EVERY}, ${ACTIVE_HOURS} hours of it. `
      + `Each view asked ${ASKS} times in a row (after 3), the dashboard's ranges`);
    printTable(['who', 'range', 'requests shown', 'accounts listed', 'p50 ms', 'p99 ms'], table);
  } finally {
    await proc?.stop('SIGTERM');
    if (proc) rmSync(proc.dataDir, { recursive: true, force: true });
    await state.drop();
  }
}
