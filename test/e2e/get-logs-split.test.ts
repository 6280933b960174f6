/**
 * eth_getLogs over a range wider than its upstreams take, through the wire: a real anvil holds a chain of 12,000
 * blocks with 12,000 logs (the archive), and loopback providers in front of it (test/helpers/provider.ts) answer as
 * the market does: two that take 2,000 blocks (Erigon's and QuickNode's words, one wanting its key in a header), one
 * that answers 10,000 logs at most (Infura's words), one that takes 700 blocks and says only "block range too large".
 * Every answer is compared with the archive anvil's own answer to the same filter.
 * Run: node --import tsx --test test/e2e/get-logs-split.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { id as topicOf } from 'ethers';
import type { TestAnvil } from '../helpers/anvil.ts';
import { startEventChain, type EventChain } from '../helpers/event-chain.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startProvider, WORDS, type Provider } from '../helpers/provider.ts';

const hex = (n: number) => `0x${n.toString(16)}`;
const HEAVY = topicOf('Heavy(uint256,address,uint256,bytes)');
const KEY = 'erigon-key-5f1e9a';

let archive: TestAnvil;
let chain: EventChain;
const providers: Provider[] = [];
const gateways: TestGateway[] = [];
let erigon: Provider;
let quick: Provider;
let infura: Provider;
let vague: Provider;
let configured: Provider;
let g: TestGateway;

before(async () => {
  const t0 = performance.now();
  ({ node: archive, chain } = await startEventChain({ blocks: 12_001, every: 50, logsPerBlock: 50 }));
  console.log(`chain: ${chain.head + 1} blocks, ${chain.logs} logs, ready in ${Math.round(performance.now() - t0)} ms (made once, then loaded: test/helpers/event-chain.ts)`);
  erigon = await startProvider(archive.url, { key: { header: 'x-api-key', value: KEY }, getLogs: { maxRange: 2000, words: WORDS.erigon } });
  quick = await startProvider(archive.url, { getLogs: { maxRange: 2000, words: WORDS.quicknode } });
  infura = await startProvider(archive.url, { getLogs: { maxResults: 10_000, words: WORDS.infura } });
  vague = await startProvider(archive.url, { getLogs: { maxRange: 700, words: WORDS.vague } });
  configured = await startProvider(archive.url, { getLogs: { maxRange: 2000, words: WORDS.erigon } });
  providers.push(erigon, quick, infura, vague, configured);
  g = await startTestGateway({
    networks: {
      // Nothing said of their bounds: learnt from their refusals.
      ranged: { chainId: 1, upstreams: [{ url: erigon.url, headers: { 'x-api-key': KEY } }, { url: quick.url }] },
      results: { chainId: 1, upstream: infura.url },
      vague: { chainId: 1, upstream: vague.url },
      configured: { chainId: 1, upstreams: [{ url: configured.url, getLogs: { maxBlockRange: 2000 } }] },
    },
    // The plan allows 20,000 blocks and any number of logs; the providers take less.
    limits: { getLogs: { maxBlockRange: 20_000, maxResults: 0 } },
    upstreams: { checkIntervalMs: 200 },
    cache: { enabled: false },
  });
  gateways.push(g);
});

after(async () => {
  for (const x of gateways) await x.close();
  for (const p of providers) await p.close();
  archive?.stop();
});

/** The gateway's answer to eth_getLogs(filter) on `network`, with its status; and the archive's own answer. */
async function both(network: string, filter: Record<string, unknown>) {
  const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [filter] }, { network });
  const archived = await archive.call('eth_getLogs', [filter]);
  return { r, archived: archived as unknown[] };
}

describe('eth_getLogs over 12,000 blocks in front of providers that take less', { timeout: 600_000 }, () => {
  test("two providers that take 2,000 blocks (their bounds learnt from their words): exactly the archive's answer, every accepted piece within 2,000 blocks", async () => {
    const filter = { fromBlock: '0x0', toBlock: hex(chain.head), address: chain.emitter };
    const first = await both('ranged', filter);
    assert.equal(first.r.status, 200, first.r.text.slice(0, 300));
    assert.equal(first.archived.length, chain.logs);
    assert.deepEqual(first.r.body.result, first.archived);
    const callsFirst = erigon.logRanges.length + quick.logRanges.length;
    const refusedFirst = [...erigon.logRanges, ...quick.logRanges].filter((x) => x.refused).length;
    const second = await both('ranged', { ...filter, fromBlock: 'earliest', toBlock: 'latest' });
    // Said before the comparison: an error answer is shown as it is, not as a diff against 12,000 logs.
    assert.ok(Array.isArray(second.r.body?.result), `${second.r.status} ${second.r.text.slice(0, 300)}`);
    assert.deepEqual(second.r.body.result, second.archived, 'tags: earliest..latest');
    const all = [...erigon.logRanges, ...quick.logRanges];
    const accepted = all.filter((x) => !x.refused);
    const refused = all.filter((x) => x.refused).length;
    console.log(`ranged: ${chain.logs} logs over ${chain.head + 1} blocks; first client call: ${callsFirst} provider calls (${refusedFirst} refused for size); second: ${all.length - callsFirst} (${refused - refusedFirst} refused); widest accepted piece ${Math.max(...accepted.map((x) => x.to - x.from + 1))} blocks; erigon ${erigon.logRanges.length}, quicknode ${quick.logRanges.length}`);
    assert.ok(accepted.every((x) => x.to - x.from + 1 <= 2000));
    assert.equal(refused - refusedFirst, 0, 'the second call: both bounds known, no refused piece');
    assert.equal(erigon.requests.filter((q) => q.status === 401).length, 0, 'its key went with every request');
    const readyz = await (await fetch(`${g.url}/readyz`)).text();
    assert.ok(!readyz.includes(KEY), 'the key is not shown');
    assert.match(readyz, /"getLogsRange":2000/);
  });

  test('a topic filter over the range: the same logs as the archive', async () => {
    const round = hex(7).slice(2).padStart(64, '0');
    const { r, archived } = await both('ranged', { fromBlock: '0x1', toBlock: hex(chain.head), topics: [HEAVY, null, null, `0x${round}`] });
    assert.equal(archived.length, 50);
    assert.deepEqual(r.body.result, archived);
  });

  test('a provider answering 10,000 logs at most (Infura\'s words): 12,000 logs come back whole, the range split in halves', async () => {
    const before = infura.logRanges.length;
    const { r, archived } = await both('results', { fromBlock: '0x0', toBlock: hex(chain.head) });
    assert.deepEqual(r.body.result, archived);
    const asked = infura.logRanges.slice(before);
    console.log(`results: ${asked.length} provider calls for one client call (${asked.filter((x) => x.refused).length} refused): ${asked.map((x) => `${x.from}-${x.to}${x.refused ? ' refused' : ''}`).join(', ')}`);
    assert.ok(asked[0].refused && asked.length >= 3);
  });

  test('a piece refused for its size is split again: a provider taking 700 blocks that names no bound', async () => {
    const { r, archived } = await both('vague', { fromBlock: '0x0', toBlock: hex(chain.head) });
    assert.deepEqual(r.body.result, archived);
    const refused = vague.logRanges.filter((x) => x.refused);
    const accepted = vague.logRanges.filter((x) => !x.refused);
    console.log(`vague: ${vague.logRanges.length} provider calls (${refused.length} refused, widest accepted ${Math.max(...accepted.map((x) => x.to - x.from + 1))} blocks)`);
    assert.ok(refused.length >= 2, 'refused more than once: split, then split again');
    assert.ok(accepted.every((x) => x.to - x.from + 1 <= 700));
  });

  test('a configured bound: the range is cut before it goes, no call refused', async () => {
    const { r, archived } = await both('configured', { fromBlock: hex(1000), toBlock: hex(11_999) });
    assert.deepEqual(r.body.result, archived);
    assert.deepEqual(configured.logRanges.map((x) => `${x.from}-${x.to}${x.refused ? ' refused' : ''}`), [
      '1000-2999', '3000-4999', '5000-6999', '7000-8999', '9000-10999', '11000-11999',
    ]);
  });

  test("a filter by blockHash goes as it is; a range over the plan's 20,000 blocks keeps its -32005 and the range that fits", async () => {
    const [log] = await archive.call('eth_getLogs', [{ fromBlock: hex(4000), toBlock: hex(4100) }]) as Array<{ blockHash: string }>;
    const { r, archived } = await both('configured', { blockHash: log.blockHash });
    assert.equal(archived.length, 50);
    assert.deepEqual(r.body.result, archived);
    const over = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: hex(25_000) }] }, { network: 'configured' });
    assert.equal(over.body.error.code, -32005);
    assert.match(over.body.error.message, /Try with this block range \[0x0, 0x4e1f\]/);
  });
});

describe('each piece is charged as the call it is', { timeout: 120_000 }, () => {
  test('on a plan of 200 compute units a month: a 4,000-block call (2 pieces, 120) passes, a 6,000-block one (3 pieces) is refused for the month', async () => {
    const tiny = { name: 'Tiny', cuPerSecond: 1_000_000, cuPerMonth: 200, maxBatchSize: 10, debugMethods: false, maxFilters: 1 };
    const q = await startTestGateway({
      plans: { tiny }, accounts: { defaultPlan: 'tiny' },
      networks: { configured: { chainId: 1, upstreams: [{ url: configured.url, getLogs: { maxBlockRange: 2000 } }] } },
      limits: { getLogs: { maxBlockRange: 20_000, maxResults: 0 } },
      cache: { enabled: false },
    });
    gateways.push(q);
    const call = (to: number) => q.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: hex(to) }] }, { network: 'configured' });
    const ok = await call(3_999);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.result.length, 80 * 50);
    const refused = await call(5_999);
    console.log(`charged: 4,000 blocks → ${ok.body.result.length} logs; 6,000 blocks → ${refused.status} ${refused.body.error?.message}`);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, -32005);
    assert.match(refused.body.error.message, /monthly quota/);
  });
});
