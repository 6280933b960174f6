/**
 * The upstream pool's own cost per call, in process: CPU µs per call of `UpstreamPool.call` in front of nodes that
 * answer at once, for one node and three, a light read and eth_getLogs, with no upstream bounds configured (the
 * usual case). `node --import tsx bench/pool-path.ts [ROOT]`: ROOT is a checkout's directory (default this one), so
 * that an older commit's src/ (git archive REF src | tar -x -C DIR) is measured beside it (docs/upstreams.md).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';

const root = pathToFileURL(resolve(process.argv[2] ?? '.')).href;
const { UpstreamPool } = await import(`${root}/src/chain/upstream-pool.ts`);
const { UpstreamMember } = await import(`${root}/src/chain/upstream-member.ts`);
const log = pino({ level: 'silent' });
const answer = { result: '0x1' };
const logs = { result: [], raw: '[]' };
const node = (label: string) => ({ label, call: (m: string) => Promise.resolve(m === 'eth_getLogs' ? logs : answer), close: async () => {} });
const policy = { breakerFailures: 3, breakerCooldownMs: 5000, maxLagBlocks: 5, hedge: { minMs: 50, maxMs: 0 } };

function poolOf(n: number) {
  const members = Array.from({ length: n }, (_, i) => {
    const m = new UpstreamMember(node(`n${i}`), { role: 'primary', weight: 1 }, i);
    m.head = 100;
    return m;
  });
  return new UpstreamPool(members, policy, () => 100, log, Date.now);
}

/** CPU µs per call over `n` calls, 100 at a time. */
async function cpuPerCall(pool: { call: (...a: any[]) => Promise<unknown> }, method: string, params: unknown[], n: number): Promise<number> {
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i += 100) {
    const calls = [];
    for (let j = 0; j < 100; j++) calls.push(pool.call(method, params, 1000, {}));
    await Promise.all(calls);
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}

const cases: Array<[string, number, string, unknown[]]> = [
  ['1 node eth_getBalance', 1, 'eth_getBalance', ['0x00000000000000000000000000000000000000a1', 'latest']],
  ['3 nodes eth_getBalance', 3, 'eth_getBalance', ['0x00000000000000000000000000000000000000a1', 'latest']],
  ['1 node eth_getLogs', 1, 'eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x10' }]],
  ['3 nodes eth_getLogs', 3, 'eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x10' }]],
];
const out: Record<string, number> = {};
for (const [name, nodes, method, params] of cases) {
  const pool = poolOf(nodes);
  await cpuPerCall(pool, method, params, 50_000); // warm-up
  out[name] = Math.round((await cpuPerCall(pool, method, params, 200_000)) * 1000) / 1000;
}
console.log(JSON.stringify(out));
