/**
 * The structures section of `npm run bench -- scale`: what each per-key and per-account structure of the hot path
 * costs a call, with one key and with keys drawn Zipf-like from 1,000,000 (the keys section's draw), in this process
 * and beside a directory of 1,000,000 packed keys (a heap the size of an instance's with a million keys read
 * ahead). Each structure is driven alone, as the gateway does per request: the resolution cache (RecentMap, 200,000
 * entries; empty, and full of keys seen earlier, where each key not in it evicts one), the directory's hash and
 * lookup (sha256 of the value, one Map of 1,000,000), the usage recorder's cell, the
 * quota's record and the in-process bucket. Two runs of each draw, alternating; ns a call. The keys section measures
 * them together inside the gateway; this says which of them grows with the keys in use. Then what one read the
 * processor's caches do not hold costs on this host, against one they do.
 *   SCALE_SECTIONS=structures npm run bench -- scale
 */
import pino from 'pino';
import { RecentMap } from '../../src/auth/recent-map.ts';
import { keyDigest } from '../../src/auth/key-value.ts';
import { PackedKeys } from '../../src/auth/packed-keys.ts';
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
  // The directory's keys: packed, by the digest of their value, as auth/key-directory.ts holds them.
  const directory = new PackedKeys();
  for (let j = 0; j < KEYS; j++) directory.add(keyDigest(value(j)), `key${j}\u001facct${j % ACCOUNTS}\u001fkey ${j}\u001fRestricted\u001frpc\u001fngk_stru\u001f\u001f\u001f2026-01-01T00:00:00.000Z\u001f`);
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
    const cache = new RecentMap<{ seen: number; slot: number }>(200_000);
    // As in an instance that has run a while: full of keys seen earlier, so each key not in it evicts the oldest.
    const full = new RecentMap<{ seen: number; slot: number }>(200_000);
    for (let j = 0; j < 200_000; j++) full.set(`ngk_earlier${j}`, { seen: 0, slot: -1 });
    const usage = new UsageRecorder(noStore, 1e9, 1000, 20, log);
    const quota = new QuotaTracker(noStore, { flushMs: 1e9 }, log);
    const buckets = new MemoryRateLimiter();
    const structures: Array<[string, (c: Call) => void]> = [
      ['resolution cache (200,000 entries)', (c) => { if (!cache.get(c.value)) cache.set(c.value, { seen: 0, slot: -1 }); }],
      ['resolution cache, full (a new key evicts one)', (c) => { if (!full.get(c.value)) full.set(c.value, { seen: 0, slot: -1 }); }],
      ['sha256 and directory lookup', (c) => { directory.get(keyDigest(c.value)); }],
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
  // What one read the processor's caches do not hold costs on this host: a Zipf-like call makes dozens of them
  // (each structure's map and record, the key's own objects), one key's none.
  const [warmRead, coldRead] = [dependentReadNs(1000), dependentReadNs(KEYS)];
  const runs = (xs: number[]) => xs.map((x) => Math.round(x).toLocaleString('en-US')).join(', ');
  console.log(`\nScale, structures: each alone, ${CALLS.toLocaleString('en-US')} calls a run after ${WARM.toLocaleString('en-US')} to warm, beside a directory of ${KEYS.toLocaleString('en-US')} packed keys; ns a call, two runs`);
  printTable(['structure', 'one key', 'Zipf-like', '× one key'], Object.entries(ns).map(([name, d]) => {
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    return [name, runs(d['one key']), runs(d['Zipf-like']), `${(mean(d['Zipf-like']) / mean(d['one key'])).toFixed(1)}x`];
  }));
  console.log(`one read that waits for the one before it (a chase through objects in a random cycle, as a call goes from a map to its entry to a record): ${warmRead.toFixed(1)} ns among 1,000 objects, ${coldRead.toFixed(1)} ns among ${KEYS.toLocaleString('en-US')} (${(coldRead / warmRead).toFixed(0)}x)`);
}

/** ns a read, each of an object whose address the previous read gave, over `n` objects linked in a random cycle. */
function dependentReadNs(n: number, reads = 4_000_000): number {
  const objects = Array.from({ length: n }, (_, i) => ({ next: undefined as unknown as { next: unknown; v: number }, v: i }));
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  for (let i = 0; i < n; i++) objects[order[i]].next = objects[order[(i + 1) % n]];
  let o = objects[0];
  let sum = 0;
  for (let i = 0; i < n; i++) o = o.next as typeof o; // once round the cycle: what fits in the caches is in them
  const t = process.hrtime.bigint();
  for (let i = 0; i < reads; i++) {
    o = o.next as typeof o;
    sum += o.v;
  }
  const ns = Number(process.hrtime.bigint() - t) / reads;
  if (sum < 0) throw new Error('unreachable'); // the reads are used, so none is optimised away
  return ns;
}
