/**
 * The structures section of `npm run bench -- scale`: what each per-key and per-account structure of the hot path
 * costs a call, with one key and with keys drawn Zipf-like from 1,000,000 (the keys section's draw), in this process
 * and beside a directory of 1,000,000 packed keys (a heap the size of an instance's with a million keys read
 * ahead). Each structure is driven alone, as the gateway does per request: the resolution cache (RecentMap, 200,000
 * entries), the directory's hash and lookup (sha256 of the value, one Map of 1,000,000), the usage recorder's cell, the
 * quota's record and the in-process bucket. Two runs of each draw, alternating; ns a call. The keys section measures
 * them together inside the gateway; this says which of them grows with the keys in use.
 *   SCALE_SECTIONS=structures npm run bench -- scale
 */
import pino from 'pino';
import { RecentMap } from '../../src/auth/recent-map.ts';
import { hashKey } from '../../src/auth/key-value.ts';
import { UsageRecorder } from '../../src/analytics/usage-recorder.ts';
import { QuotaTracker } from '../../src/limits/quota.ts';
import { MemoryRateLimiter } from '../../src/shared-state/rate-limiter/memory-rate-limiter.ts';
import type { UsageStore } from '../../src/store/usage/usage-store.ts';
import { printTable } from '../rpc-throughput.ts';

const KEYS = 1_000_000;
const ACCOUNTS = 100_000;
const CALLS = 400_000;
const WARM = 50_000;
const SALT = 'structuresbenchsalt0';
const value = (j: number) => `ngk_${SALT}${String(j).padStart(7, '0')}`;

/** Rank r drawn with probability about 1 / (r ln N), spread over the keys by a multiplier prime to N (key-scripts.ts). */
function zipfLike(): number {
  let r = Math.floor(Math.exp(Math.random() * Math.log(KEYS + 1)));
  if (r > KEYS) r = KEYS;
  return ((r - 1) * 7919) % KEYS;
}

/** A store that answers at once: the structures' own work is measured, not a database's. */
const noStore = { addUsageMinutes: async () => {}, addUsage: async () => new Map(), getUsages: async () => new Map() } as unknown as UsageStore;

interface Call { value: string; keyId: string; accountId: string; bucket: string }

export async function scaleStructures(): Promise<void> {
  // The directory's heap: packed keys by hash, as auth/key-directory.ts holds them.
  const directory = new Map<string, string>();
  for (let j = 0; j < KEYS; j++) directory.set(hashKey(value(j)), `key${j}\u001facct${j % ACCOUNTS}\u001fkey ${j}\u001fRestricted\u001frpc\u001fngk_stru\u001f\u001f\u001f2026-01-01T00:00:00.000Z\u001f`);
  // Each key's strings made once, as a resolved key holds them: a call passes the same strings every time.
  const calls = new Map<number, Call>();
  const callOf = (j: number) => {
    let c = calls.get(j);
    if (c === undefined) calls.set(j, (c = { value: value(j), keyId: `key${j}`, accountId: `acct${j % ACCOUNTS}`, bucket: `a:acct${j % ACCOUNTS}` }));
    return c;
  };
  const draws = {
    'one key': Array.from({ length: CALLS }, () => callOf(1)),
    'Zipf-like': Array.from({ length: CALLS }, () => callOf(zipfLike())),
  };
  const log = pino({ level: 'silent' });
  const ns: Record<string, Record<string, number[]>> = {};
  for (const d of ['one key', 'Zipf-like', 'one key', 'Zipf-like'] as const) {
    const cache = new RecentMap<{ moved: number }>(200_000);
    const usage = new UsageRecorder(noStore, 1e9, 1000, 20, log);
    const quota = new QuotaTracker(noStore, 1e9, log);
    const buckets = new MemoryRateLimiter();
    const structures: Array<[string, (c: Call) => void]> = [
      ['resolution cache (200,000 entries)', (c) => { if (!cache.get(c.value)) cache.set(c.value, { moved: 0 }); }],
      ['sha256 and directory lookup', (c) => { directory.get(hashKey(c.value)); }],
      ['usage cell', (c) => usage.record(c.accountId, c.keyId, 'mainnet', 'eth_chainId', 0, 1, 0.3)],
      ['quota record', (c) => { quota.add(c.accountId, 1); quota.usedBy(c.accountId); }],
      ['bucket', (c) => { buckets.consume(c.bucket, 1, 1e9, 1e9); }],
    ];
    for (const [name, f] of structures) {
      const xs = draws[d];
      for (let i = 0; i < WARM; i++) f(xs[i]);
      const t = process.hrtime.bigint();
      for (let i = 0; i < CALLS; i++) f(xs[i]);
      ((ns[name] ??= {})[d] ??= []).push(Number(process.hrtime.bigint() - t) / CALLS);
    }
    await Promise.all([usage.close(), quota.close(), buckets.close()]);
  }
  const runs = (xs: number[]) => xs.map((x) => Math.round(x).toLocaleString('en-US')).join(', ');
  console.log(`\nScale, structures: each alone, ${CALLS.toLocaleString('en-US')} calls a run after ${WARM.toLocaleString('en-US')} to warm, beside a directory of ${KEYS.toLocaleString('en-US')} packed keys; ns a call, two runs`);
  printTable(['structure', 'one key', 'Zipf-like', '× one key'], Object.entries(ns).map(([name, d]) => {
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    return [name, runs(d['one key']), runs(d['Zipf-like']), `${(mean(d['Zipf-like']) / mean(d['one key'])).toFixed(1)}x`];
  }));
}
