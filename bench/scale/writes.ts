/**
 * The writes section of `npm run bench -- scale`: what a long tail of keys costs the store's writers, measured alone
 * (the keys section measures them inside the gateway, where two cores shared with wrk and PostgreSQL blur them).
 * A throwaway PostgreSQL database of 2,000 accounts and 20,000 keys; then, 8 times: one usage flush of 20,000 cells
 * (one per key, as a minute of a long tail makes), the last uses of the 20,000 keys, and the quota's write of the
 * 2,000 accounts (which answers their totals; QUOTA_WRITES of them in a row); then the roll-up of the hour those flushes wrote into its hour and day
 * rows. For each: this process's CPU (encoding the rows), PostgreSQL's CPU and the time until the database answered.
 *   SCALE_SECTIONS=writes npm run bench -- scale
 */
import { randomUUID } from 'node:crypto';
import { postgresStores } from '../bench-stores.ts';
import { printTable } from '../rpc-throughput.ts';
import { median } from '../wrk-cells.ts';
import { forkingServerCpuMicros } from '../targets.ts';
import { buildKeyState, postgresServerPid } from './key-state.ts';

const ACCOUNTS = 2000;
const KEYS = 20_000;
const ROUNDS = 8;
/**
 * The quota's writes timed together each round: one write of 2,000 accounts takes about as long as the CPU clock's
 * grain (10 ms here), so one alone read 0 or 10 µs a row.
 */
const QUOTA_WRITES = 10;

interface Timed { cpu: number; store: number; wall: number }

/** `f`'s CPU time in this process, PostgreSQL's meanwhile (NaN when unreadable: postmaster undefined) and its wall time, ms. */
async function timed(f: () => Promise<unknown>, postmaster: number | undefined): Promise<Timed> {
  const storeCpu = () => (postmaster === undefined ? NaN : forkingServerCpuMicros(postmaster) ?? NaN);
  const s0 = storeCpu();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await f();
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1000, store: (storeCpu() - s0) / 1000, wall: performance.now() - t0 };
}

export async function scaleWrites(): Promise<void> {
  const state = await buildKeyState(ACCOUNTS, KEYS, 10);
  const stores = await postgresStores(state.url);
  const postmaster = await postgresServerPid(state.url);
  const cells: Record<string, Timed[]> = { flush: [], touch: [], quota: [], rollUp: [] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const minute = new Date(Date.UTC(2026, 0, 1, 0, round)).toISOString().slice(0, 16);
      const rows = Array.from({ length: KEYS }, (_, j) => ({
        minute, accountId: `acct${1 + (j % (ACCOUNTS - 1))}`, keyId: `key${j}`, network: 'mainnet', method: 'eth_chainId', code: 0,
        requests: 3, computeUnits: 3, latencyMsSum: 2, latency: [3, 0, 0, 0, 0, 0],
      }));
      cells.flush.push(await timed(() => stores.usage.addUsageMinutes(rows, randomUUID()), postmaster));
      const at = new Date(Date.UTC(2026, 0, 1, 0, round)).toISOString();
      const used = new Map(rows.map((r) => [r.keyId, at]));
      cells.touch.push(await timed(() => stores.keys.touchKeys(used), postmaster));
      const ids = Array.from({ length: ACCOUNTS - 1 }, (_, i) => `acct${i + 1}`);
      const units = ids.map(() => 5);
      const quota = await timed(async () => {
        for (let i = 0; i < QUOTA_WRITES; i++) await stores.usage.addUsage('2026-01', ids, units, randomUUID());
      }, postmaster);
      cells.quota.push({ ...quota, wall: quota.wall / QUOTA_WRITES });
    }
    cells.rollUp.push(await timed(() => stores.usage.rollUp('2026-01-01T01:00'), postmaster));
  } finally {
    await stores.close();
    await state.drop();
  }
  const f = (x: number) => x.toFixed(0);
  console.log(`\nScale, writes: PostgreSQL, ${ROUNDS} rounds (medians); CPU of this process, PostgreSQL's CPU, and the time until the database answered`);
  printTable(['write', 'rows', 'cpu ms', 'cpu µs/row', 'PostgreSQL cpu µs/row', 'until answered ms'], [
    ['usage flush (minute rows, everyone\'s)', KEYS, cells.flush],
    ['last uses of keys', KEYS, cells.touch],
    [`quota: write (answers the totals), ${QUOTA_WRITES} in a row; until answered: one`, (ACCOUNTS - 1) * QUOTA_WRITES, cells.quota],
    [`roll-up of the hour: its ${ROUNDS} minute rows per key into hour and day rows, per key`, KEYS, cells.rollUp],
  ].map(([name, n, c]) => {
    const xs = c as Timed[];
    const cpu = median(xs.map((x) => x.cpu));
    const store = median(xs.map((x) => x.store));
    return [String(name), Number(n).toLocaleString('en-US'), f(cpu), ((cpu * 1000) / Number(n)).toFixed(1), Number.isNaN(store) ? 'n/a' : ((store * 1000) / Number(n)).toFixed(1), f(median(xs.map((x) => x.wall)))];
  }));
}
