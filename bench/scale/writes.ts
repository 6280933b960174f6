/**
 * The writes section of `npm run bench -- scale`: what a long tail of keys costs the store's writers, measured alone
 * (the keys section measures them inside the gateway, where two cores shared with wrk and PostgreSQL blur them).
 * A throwaway PostgreSQL database of 2,000 accounts and 20,000 keys; then, 8 times: one usage flush of 20,000 cells
 * (one per key, as a minute of a long tail makes), the last uses of the 20,000 keys, and the quota's write and read
 * of the 2,000 accounts. For each: this process's CPU (encoding the rows) and the time until the database answered.
 *   SCALE_SECTIONS=writes npm run bench -- scale
 */
import { randomUUID } from 'node:crypto';
import { postgresStores } from '../bench-stores.ts';
import { printTable } from '../rpc-throughput.ts';
import { median } from '../wrk-cells.ts';
import { buildKeyState } from './key-state.ts';

const ACCOUNTS = 2000;
const KEYS = 20_000;
const ROUNDS = 8;

/** `f`'s CPU time in this process and its wall time, ms. */
async function timed(f: () => Promise<unknown>): Promise<{ cpu: number; wall: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await f();
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1000, wall: performance.now() - t0 };
}

export async function scaleWrites(): Promise<void> {
  const state = await buildKeyState(ACCOUNTS, KEYS, 10);
  const stores = await postgresStores(state.url);
  const cells: Record<string, Array<{ cpu: number; wall: number }>> = { flush: [], touch: [], quota: [] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const minute = new Date(Date.UTC(2026, 0, 1, 0, round)).toISOString().slice(0, 16);
      const rows = Array.from({ length: KEYS }, (_, j) => ({
        minute, accountId: `acct${1 + (j % (ACCOUNTS - 1))}`, keyId: `key${j}`, network: 'mainnet', method: 'eth_chainId', code: 0,
        requests: 3, computeUnits: 3, latencyMsSum: 2, latency: [3, 0, 0, 0, 0, 0],
      }));
      cells.flush.push(await timed(() => stores.usage.addUsageMinutes(rows, randomUUID())));
      const at = new Date(Date.UTC(2026, 0, 1, 0, round)).toISOString();
      const used = new Map(rows.map((r) => [r.keyId, at]));
      cells.touch.push(await timed(() => stores.keys.touchKeys(used)));
      const units = new Map(Array.from({ length: ACCOUNTS - 1 }, (_, i) => [`acct${i + 1}`, 5]));
      cells.quota.push(await timed(async () => {
        await stores.usage.addUsage('2026-01', units, randomUUID());
        await stores.usage.getUsages([...units.keys()], '2026-01');
      }));
    }
  } finally {
    await stores.close();
    await state.drop();
  }
  const f = (x: number) => x.toFixed(0);
  console.log(`\nScale, writes: PostgreSQL, ${ROUNDS} rounds (medians); CPU of this process, and the time until the database answered`);
  printTable(['write', 'rows', 'cpu ms', 'cpu µs/row', 'until answered ms'], [
    ['usage flush (minute, hour, day, everyone)', KEYS, cells.flush],
    ['last uses of keys', KEYS, cells.touch],
    ['quota: write and read again', ACCOUNTS - 1, cells.quota],
  ].map(([name, n, c]) => {
    const xs = c as Array<{ cpu: number; wall: number }>;
    const cpu = median(xs.map((x) => x.cpu));
    return [String(name), Number(n).toLocaleString('en-US'), f(cpu), ((cpu * 1000) / Number(n)).toFixed(1), f(median(xs.map((x) => x.wall)))];
  }));
}
