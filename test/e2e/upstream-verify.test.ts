/**
 * Verified answers, through the wire: an honest provider and a liar (test/helpers/provider.ts `lie`) in front of one
 * real anvil holding a chain with events. The liar, for blocks more than 50 below its head, changes each log's first
 * topic (a topic its block's logsBloom does not hold), answers a transaction's receipt as mined in the block before,
 * and gives blocks by number another hash. 1,000 calls (logs, receipts, blocks by number) at `verify: full`: every
 * answer is the node's own, the liar is marked in /readyz (verifyFailures) and /metrics. The same calls at `cheap`
 * say what that level lets through (it works out no hash and reads no header). Hedged reads are off.
 * Run: node --import tsx --test test/e2e/upstream-verify.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { buildEventChain } from '../helpers/event-chain.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startProvider, type Provider } from '../helpers/provider.ts';

const hex = (n: number) => `0x${n.toString(16)}`;
let node: TestAnvil;
let g: TestGateway;
let honest: Provider;
let liars: Record<'full' | 'cheap', Provider>;
let head: number;
/** Blocks with a transaction (and its three logs), and those transactions. */
let txBlocks: number[];
let txs: string[];

before(async () => {
  node = await startAnvil();
  const chain = await buildEventChain(node, { blocks: 400, every: 4, logsPerBlock: 3 });
  head = chain.head;
  const logs = await node.call('eth_getLogs', [{ fromBlock: '0x0', toBlock: hex(head) }]) as Array<{ blockNumber: string; transactionHash: string }>;
  txBlocks = [...new Set(logs.map((l) => Number(l.blockNumber)))];
  txs = [...new Set(logs.map((l) => l.transactionHash))];
  honest = await startProvider(node.url);
  const lie = { olderThan: 50, logs: true, receipt: true, blockHash: true };
  liars = { full: await startProvider(node.url, { lie }), cheap: await startProvider(node.url, { lie }) };
  g = await startTestGateway({
    networks: {
      full: { chainId: 1, verify: 'full', upstreams: [{ url: honest.url }, { url: liars.full.url }] },
      cheap: { chainId: 1, verify: 'cheap', upstreams: [{ url: honest.url }, { url: liars.cheap.url }] },
    },
    // The liar's breaker opens after 3 wrong answers and lets a trial through every 300 ms: it keeps being asked.
    upstreams: { checkIntervalMs: 1000, hedgeMaxMs: 0, breakerCooldownMs: 300, holdingsProbeMs: 0 },
    cache: { enabled: false },
  });
});

after(async () => {
  await g?.close();
  for (const p of [honest, ...Object.values(liars ?? {})]) await p?.close();
  node?.stop();
});

/** Call `i` of the mix: logs of a block or a few, a receipt, a block by number; mostly older than the liar's 50. */
function callOf(i: number): { method: string; params: unknown[] } {
  const b = txBlocks[(i * 7) % txBlocks.length];
  switch (i % 3) {
    case 0: return { method: 'eth_getLogs', params: [{ fromBlock: hex(b), toBlock: hex(Math.min(head, b + (i % 9))) }] };
    case 1: return { method: 'eth_getTransactionReceipt', params: [txs[(i * 7) % txs.length]] };
    default: return { method: 'eth_getBlockByNumber', params: [hex(b), false] };
  }
}

/** What a client would take from an answer: logs whole, a receipt's block and logs, a block's number and hash. */
function essence(method: string, result: any): string {
  if (method === 'eth_getLogs') return JSON.stringify(result);
  if (method === 'eth_getTransactionReceipt') return JSON.stringify(result && [result.blockHash, result.blockNumber, result.transactionHash, result.logs]);
  return JSON.stringify(result && [result.number, result.hash]);
}

/** 1,000 calls of the mix on `network`, each compared with the node's own answer. */
async function run(network: string, count: number) {
  const truth = new Map<number, string>();
  const answers: Array<{ i: number; method: string; body: any }> = [];
  let next = 0;
  await Promise.all(Array.from({ length: 6 }, async () => {
    for (let i = next++; i < count; i = next++) {
      const { method, params } = callOf(i);
      truth.set(i, essence(method, await node.call(method, params)));
      answers.push({ i, method, body: (await g.rpc({ jsonrpc: '2.0', id: i, method, params }, { network })).body });
    }
  }));
  const wrong = answers.filter((a) => a.body.error === undefined && essence(a.method, a.body.result) !== truth.get(a.i));
  const errors = answers.filter((a) => a.body.error !== undefined);
  return { answers, wrong, errors };
}

/** nodegate_upstream_verify_failures_total on `network`, by upstream. */
async function failuresOn(network: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${g.url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^nodegate_upstream_verify_failures_total\{([^}]*)\} (\d+)/gm)) {
    if (!m[1].includes(`network="${network}"`)) continue;
    const upstream = /upstream="([^"]*)"/.exec(m[1])![1];
    out[upstream] = (out[upstream] ?? 0) + Number(m[2]);
  }
  return out;
}

describe('verified answers in front of an honest node and a liar', { timeout: 240_000 }, () => {
  test('verify: full, 1,000 calls (logs, receipts, blocks by number): 0 wrong answers reach a client; the liar is marked in /readyz and /metrics', async () => {
    const t0 = Date.now();
    const { answers, wrong, errors } = await run('full', 1000);
    const readyz = (await (await fetch(`${g.url}/readyz`)).json()) as { upstreams: Array<{ network: string; upstream: string; verifyFailures?: Record<string, number> }> };
    const shown = readyz.upstreams.filter((u) => u.network === 'full');
    const metrics = await failuresOn('full');
    const methods = ['eth_getLogs', 'eth_getTransactionReceipt', 'eth_getBlockByNumber'];
    const clientCalls = Object.fromEntries(methods.map((m) => [m, answers.filter((a) => a.method === m).length]));
    const calls = Object.fromEntries(methods.map((m) => [m, honest.calls(m, t0) + liars.full.calls(m, t0)]));
    console.log(`full: ${answers.length} calls in ${Date.now() - t0} ms, ${wrong.length} wrong answers, ${errors.length} errors; lies told ${JSON.stringify(liars.full.lies)}; `
      + `/readyz verifyFailures ${JSON.stringify(shown.map((u) => u.verifyFailures ?? {}))}; /metrics ${JSON.stringify(metrics)}; client calls ${JSON.stringify(clientCalls)}, upstream calls (retries, headers read and 1 check a second included) ${JSON.stringify(calls)}`);
    assert.deepEqual(wrong.map((w) => ({ i: w.i, method: w.method })), []);
    assert.deepEqual(errors.map((e) => e.body.error), []);
    const liar = shown.find((u) => u.upstream.includes(new URL(liars.full.url).port))!;
    const good = shown.find((u) => u.upstream.includes(new URL(honest.url).port))!;
    assert.ok(Object.values(liar.verifyFailures ?? {}).reduce((a, b) => a + b, 0) > 0, 'the liar has verifyFailures');
    assert.equal(good.verifyFailures, undefined, 'the honest node has none');
    assert.ok(Object.entries(metrics).some(([u, n]) => u.includes(new URL(liars.full.url).port) && n > 0));
    assert.ok(Object.values(liars.full.lies).reduce((a, b) => a + b, 0) > 50, 'the liar did lie');
  });

  test('verify: cheap, the same calls: what cheap (no hashing, no header read) lets through of such lies is printed; 0 errors', async () => {
    const { answers, wrong, errors } = await run('cheap', 1000);
    const byMethod = (list: typeof answers) => Object.fromEntries(['eth_getLogs', 'eth_getTransactionReceipt', 'eth_getBlockByNumber'].map((m) => [m, list.filter((a) => a.method === m).length]));
    console.log(`cheap: ${answers.length} calls, wrong answers by method ${JSON.stringify(byMethod(wrong))}, ${errors.length} errors; lies told ${JSON.stringify(liars.cheap.lies)}; /metrics ${JSON.stringify(await failuresOn('cheap'))}`);
    assert.deepEqual(errors.map((e) => e.body.error), []);
  });
});
