/**
 * `node --import tsx bench/cache-hit-tier.ts`: what a memory cache hit costs with the shared tier configured and
 * without it, in one process, rounds alternating (a final eth_getBalance and eth_blockNumber, looked up and answered
 * as the pipeline does: `lookup`, then `run` with it). A hit never reaches the tier: the two should read alike.
 */
import pino from 'pino';
import { ChainHead } from '../src/chain/chain-head.ts';
import { NetworkCache, ResponseCache, type CacheOutcome } from '../src/cache/response-cache.ts';
import { SharedTier } from '../src/cache/shared-tier.ts';
import { MemoryAnswers } from '../src/shared-state/answers/memory-answers.ts';

const log = pino({ level: 'silent' });
const caller = { key: { account: { id: 'acct' } } };
const call = async () => ({ result: '0x1', raw: '"0x1"' });

function cacheOf(tier: SharedTier | undefined): NetworkCache {
  const head = new ChainHead(10, log, () => {}, { advanced: () => {}, wentBack: () => {} });
  head.number = 1000;
  return new NetworkCache('mainnet', new ResponseCache(64 << 20, 1), head, tier);
}
const calls: Array<[string, unknown[]]> = [['eth_getBalance', ['0x00000000000000000000000000000000000000aa', '0x64']], ['eth_blockNumber', []]];

async function nsPerHit(cache: NetworkCache, n: number): Promise<number> {
  for (const [m, p] of calls) await cache.run(m, p, call, { ...caller });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const [m, p] = calls[i & 1];
    const l = cache.lookup(m, p)!;
    if (!l.hit) throw new Error('a miss');
    const seen: { cache?: CacheOutcome; key: { account: { id: string } } } = { key: caller.key };
    void cache.run(m, p, call, seen, l);
  }
  return Number(process.hrtime.bigint() - t0) / n;
}

const off = cacheOf(undefined);
const on = cacheOf(new SharedTier(new MemoryAnswers(1 << 20), { ttlMs: 60_000, headTtlMs: 15_000, waitMs: 1000 }));
const rounds: Record<'off' | 'on', number[]> = { off: [], on: [] };
// Each round in the other order too: neither is always the warmer one.
for (let r = 0; r < 10; r++) {
  const order = r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
  for (const which of order) rounds[which].push(await nsPerHit(which === 'off' ? off : on, 200_000));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`memory hit, ns per call (median of 10 rounds of 200,000): tier off ${median(rounds.off).toFixed(0)}, tier on ${median(rounds.on).toFixed(0)}, ratio ${(median(rounds.on) / median(rounds.off)).toFixed(3)}`);
