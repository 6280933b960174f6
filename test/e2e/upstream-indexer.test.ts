/**
 * An indexer's view, through the wire: the cached event chain (12,001 blocks, 240 transactions of 50 logs each,
 * test/helpers/event-chain.ts) behind two providers that keep only the last 3,000 blocks of history (EIP-4444's
 * "pruned history unavailable", `null` for an older receipt) and the last 128 blocks of state, take eth_getLogs
 * ranges of 2,000 blocks at most (Alchemy's words), sell 40 calls a second and answer 429 at first, and one archive
 * node (a fallback: the providers take what they hold). The indexer does what ponder's historical sync does (node_modules/ponder/dist/esm/sync-historical): the
 * contract's logs in ranges of 5,000 blocks, then each block with logs and its receipts (by the block's hash, as
 * ponder asks them). Every answer must be the archive node's own, with 0 errors. The full indexer (ponder itself)
 * runs as `npm run soak -- ponder-pruned` (bench/soak-ponder-pruned.ts): too long for the suite.
 * Run: node --import tsx --test test/e2e/upstream-indexer.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestAnvil } from '../helpers/anvil.ts';
import { startEventChain, type EventChain } from '../helpers/event-chain.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startProvider, WORDS, type Provider } from '../helpers/provider.ts';

const hex = (n: number) => `0x${n.toString(16)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let node: TestAnvil;
let chain: EventChain;
let g: TestGateway;
let pruned: Provider[];
let archive: Provider;

before(async () => {
  ({ node, chain } = await startEventChain({ blocks: 12_001, every: 50, logsPerBlock: 50 }));
  const options = { pruneHistoryOlderThan: 3000, pruneOlderThan: 128, getLogs: { maxRange: 2000, words: WORDS.alchemy } };
  pruned = [await startProvider(node.url, options), await startProvider(node.url, options)];
  archive = await startProvider(node.url);
  g = await startTestGateway({
    networks: { indexed: { chainId: 1, upstreams: [{ url: pruned[0].url, rate: 40 }, { url: pruned[1].url, rate: 40 }, { url: archive.url, role: 'fallback' }] } },
    rpc: { extraMethods: { indexed: ['eth_getBlockReceipts'] } },
    limits: { getLogs: { maxBlockRange: 20_000, maxResults: 0 } },
    upstreams: { checkIntervalMs: 500, hedgeMaxMs: 0, holdingsProbeMs: 600_000 },
    cache: { enabled: false },
  });
});

after(async () => {
  await g?.close();
  for (const p of [...(pruned ?? []), archive]) await p?.close();
  node?.stop();
});

type Client = (method: string, params: unknown[]) => Promise<{ result?: any; error?: any }>;

/** ponder's historical sync, in short: the contract's logs in ranges, then each block with logs and its receipts. */
async function index(call: Client, afterLogs: () => void = () => {}) {
  const logs: any[] = [];
  const errors: any[] = [];
  for (let from = 0; from <= chain.head; from += 5000) {
    const a = await call('eth_getLogs', [{ address: chain.emitter, fromBlock: hex(from), toBlock: hex(Math.min(chain.head, from + 4999)) }]);
    if (a.error) errors.push(a.error);
    else logs.push(...a.result);
  }
  afterLogs();
  const blocks = [...new Set(logs.map((l) => l.blockNumber as string))];
  const seen: any[] = [];
  await Promise.all(Array.from({ length: 4 }, async (_, w) => {
    for (let i = w; i < blocks.length; i += 4) {
      const b = await call('eth_getBlockByNumber', [blocks[i], false]);
      if (b.error || !b.result) { errors.push(b.error ?? `block ${blocks[i]}: null`); continue; }
      const rs = await call('eth_getBlockReceipts', [b.result.hash]);
      if (rs.error || !rs.result) { errors.push(rs.error ?? `receipts of ${blocks[i]}: null`); continue; }
      seen[i] = { number: b.result.number, hash: b.result.hash, timestamp: b.result.timestamp,
        receipts: rs.result.map((r: any) => [r.transactionHash, r.blockHash, r.status, r.gasUsed, r.logs.length]) };
    }
  }));
  return { logs, blocks: seen, errors };
}

describe("an indexer's view through pruned, throttled providers and an archive node", { timeout: 240_000 }, () => {
  test('the event chain indexed through Nodegate is exactly what the plain archive node gives; 0 errors seen by the indexer', async () => {
    // What each holds, probed at start: the pruned providers' windows are known before the indexer starts.
    let holds: unknown[] = [];
    for (let i = 0; i < 100; i++) {
      const ups = ((await (await fetch(`${g.url}/readyz`)).json()) as { upstreams: Array<{ holds?: { history?: unknown } }> }).upstreams;
      holds = ups.map((u) => u.holds);
      if (ups.every((u) => u.holds?.history !== undefined)) break;
      await sleep(100);
    }
    console.log(`holds at start (/readyz): ${JSON.stringify(holds)}`);
    const t0 = Date.now();
    const direct: Client = async (method, params) => ({ result: await node.call(method, params) });
    const through: Client = async (method, params) => (await g.rpc({ jsonrpc: '2.0', id: 1, method, params }, { network: 'indexed' })).body;
    // The providers answer 429 (Retry-After: 1) to their next three requests once the logs are in.
    const got = await index(through, () => { for (const p of pruned) p.throttle(3, 1); });
    const ms = Date.now() - t0;
    const want = await index(direct);
    const methods = ['eth_getLogs', 'eth_getBlockByNumber', 'eth_getBlockReceipts'];
    const calls = [...pruned, archive].map((p) => Object.fromEntries(methods.map((m) => [m, p.calls(m, t0)])));
    const pieces = pruned.map((p) => p.logRanges.filter((r) => r.from >= 0).length);
    const refused = pruned.map((p) => p.requests.filter((r) => r.status === 429).length);
    console.log(`indexer: ${got.logs.length} logs, ${got.blocks.filter(Boolean).length} blocks with their receipts in ${ms} ms, ${got.errors.length} errors; `
      + `client calls: eth_getLogs ${Math.ceil((chain.head + 1) / 5000)}, blocks ${want.blocks.length}, block receipts ${want.blocks.length}; upstream calls: pruned ${JSON.stringify(calls[0])} and ${JSON.stringify(calls[1])}, archive ${JSON.stringify(calls[2])}; `
      + `eth_getLogs pieces at the pruned providers ${pieces.join(' and ')} (ranges ${pruned.map((p) => p.logRanges.map((r) => `${r.from}-${r.to}${r.refused ? '(refused)' : ''}`).join(' ')).join(' | ')}); 429s answered ${refused.join(' and ')}`);
    assert.deepEqual(got.errors, []);
    assert.equal(got.logs.length, chain.logs);
    assert.deepEqual(got.logs, want.logs, 'the logs are the archive node\'s');
    assert.deepEqual(got.blocks, want.blocks, 'the blocks and receipts are the archive node\'s');
  });
});
