/**
 * Verified answers, through the wire: an honest provider and a liar (test/helpers/provider.ts `lie`) in front of one
 * real anvil holding a chain with events. The liar, for blocks more than 50 below its head, changes each log's first
 * topic (a topic its block's logsBloom does not hold), answers a transaction's receipt as mined in the block before,
 * and gives blocks by number another hash. 1,000 calls (logs, receipts, blocks by number) at the default level
 * (`cheap`, nothing configured) and at `full`: every answer is the node's own, the liar is marked in /readyz
 * (verifyFailures) and /metrics; upstream calls per client call are printed. A network whose only node is the liar:
 * its lies are errors naming the check, never answers. A node that answers `[]` for logs it has: its empty answers are
 * asked of the other node. Hedged reads are off.
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
let liars: Record<'full' | 'cheap' | 'solo' | 'empty', Provider>;
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
  liars = { full: await startProvider(node.url, { lie }), cheap: await startProvider(node.url, { lie }), solo: await startProvider(node.url, { lie }),
    empty: await startProvider(node.url, { lie: { olderThan: 50, emptyLogs: true } }) };
  g = await startTestGateway({
    networks: {
      full: { chainId: 1, verify: 'full', upstreams: [{ url: honest.url }, { url: liars.full.url }] },
      // The default level: `verify` not configured.
      cheap: { chainId: 1, upstreams: [{ url: honest.url }, { url: liars.cheap.url }] },
      solo: { chainId: 1, upstreams: [{ url: liars.solo.url }] },
      empty: { chainId: 1, upstreams: [{ url: honest.url }, { url: liars.empty.url }] },
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

/** The providers' calls since `t0` by method (retries, header reads and the health checks included), per client call. */
function upstreamCalls(providers: Provider[], t0: number, clientCalls: number) {
  const methods = ['eth_getLogs', 'eth_getTransactionReceipt', 'eth_getBlockByNumber'];
  const by = Object.fromEntries(methods.map((m) => [m, providers.reduce((a, p) => a + p.calls(m, t0), 0)]));
  const all = providers.reduce((a, p) => a + p.calls(undefined, t0), 0);
  return `upstream calls ${all} (${JSON.stringify(by)}), ${(all / clientCalls).toFixed(2)} per client call`;
}

/** A network's upstreams as /readyz shows them, and the liar's and the honest node's among them. */
async function shownOn(network: string, liar: Provider) {
  const readyz = (await (await fetch(`${g.url}/readyz`)).json()) as { upstreams: Array<{ network: string; upstream: string; verifyFailures?: Record<string, number> }> };
  const shown = readyz.upstreams.filter((u) => u.network === network);
  return { shown, liar: shown.find((u) => u.upstream.includes(new URL(liar.url).port))!, good: shown.find((u) => u.upstream.includes(new URL(honest.url).port)) };
}

/** nodegate_verify_header_reads_total on `network`: blocks read for the headers the checks need. */
async function headerReadsOn(network: string): Promise<number> {
  const text = await (await fetch(`${g.url}/metrics`)).text();
  return Number(new RegExp(`^nodegate_verify_header_reads_total\\{network="${network}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
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

describe('verified answers in front of an honest node and a liar', { timeout: 300_000 }, () => {
  for (const network of ['cheap', 'full'] as const) {
    test(`verify: ${network === 'cheap' ? 'cheap (the default)' : 'full'}, 1,000 calls (logs, receipts, blocks by number): 0 wrong answers reach a client; the liar is marked in /readyz and /metrics`, async () => {
      const t0 = Date.now();
      const { answers, wrong, errors } = await run(network, 1000);
      const { shown, liar, good } = await shownOn(network, liars[network]);
      const metrics = await failuresOn(network);
      console.log(`${network}: ${answers.length} calls in ${Date.now() - t0} ms, ${wrong.length} wrong answers, ${errors.length} errors; lies told ${JSON.stringify(liars[network].lies)}; `
        + `/readyz verifyFailures ${JSON.stringify(shown.map((u) => u.verifyFailures ?? {}))}; /metrics ${JSON.stringify(metrics)}; ${upstreamCalls([honest, liars[network]], t0, answers.length)}, `
        + `of which header reads ${await headerReadsOn(network)}`);
      assert.deepEqual(wrong.map((w) => ({ i: w.i, method: w.method })), []);
      assert.deepEqual(errors.map((e) => e.body.error), []);
      assert.ok(Object.values(liar.verifyFailures ?? {}).reduce((a, b) => a + b, 0) > 0, 'the liar has verifyFailures');
      assert.equal(good?.verifyFailures, undefined, 'the honest node has none');
      assert.ok(Object.entries(metrics).some(([u, n]) => u.includes(new URL(liars[network].url).port) && n > 0));
      assert.ok(Object.values(liars[network].lies).reduce((a, b) => a + b, 0) > 50, 'the liar did lie');
    });
  }

  test('a network whose only node is the liar (the default level): its lies are errors naming the check, 0 wrong answers; it is marked', async () => {
    const t0 = Date.now();
    const { answers, wrong, errors } = await run('solo', 1000);
    const { liar } = await shownOn('solo', liars.solo);
    const kinds = [...new Set(errors.map((e) => `${e.body.error.code} ${e.body.error.data?.reason}`))];
    const checks = [...new Set(errors.map((e) => e.body.error.data?.check))];
    console.log(`solo: ${answers.length} calls, ${wrong.length} wrong answers, ${errors.length} errors (${kinds.join(', ')}; checks ${checks.join(', ')}); lies told ${JSON.stringify(liars.solo.lies)}; `
      + `/readyz verifyFailures ${JSON.stringify(liar.verifyFailures ?? {})}; ${upstreamCalls([liars.solo], t0, answers.length)}, of which header reads ${await headerReadsOn('solo')}`);
    assert.deepEqual(wrong.map((w) => ({ i: w.i, method: w.method })), []);
    assert.ok(errors.length > 0, 'the lies are errors');
    assert.ok(answers.length - errors.length > 0, 'the truths about newer blocks are answers');
    const first = errors[0].body.error;
    assert.equal(first.data.reason, 'answer_unverified');
    assert.match(first.message, /passed verification \([a-z-]+\)/);
    assert.ok(Object.values(liar.verifyFailures ?? {}).reduce((a, b) => a + b, 0) > 0, 'the liar has verifyFailures');
  });

  test('a node that answers [] for logs that exist (the default level): each such answer is asked of the other node, 0 logs lost', async () => {
    const t0 = Date.now();
    const calls = Array.from({ length: 300 }, (_, i) => {
      const b = txBlocks[(i * 7) % txBlocks.length];
      return { method: 'eth_getLogs', params: [{ fromBlock: hex(b), toBlock: hex(Math.min(head, b + (i % 5))) }] };
    });
    const lost: number[] = [];
    const errors: unknown[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: 6 }, async () => {
      for (let i = next++; i < calls.length; i = next++) {
        const truth = JSON.stringify(await node.call('eth_getLogs', calls[i].params));
        const { body } = await g.rpc({ jsonrpc: '2.0', id: i, ...calls[i] }, { network: 'empty' });
        if (body.error !== undefined) errors.push(body.error);
        else if (JSON.stringify(body.result) !== truth) lost.push(i);
      }
    }));
    const { liar, good } = await shownOn('empty', liars.empty);
    console.log(`empty: ${calls.length} calls, ${lost.length} answers missing logs, ${errors.length} errors; lies told ${JSON.stringify(liars.empty.lies)}; `
      + `/readyz verifyFailures ${JSON.stringify(liar.verifyFailures ?? {})}; ${upstreamCalls([honest, liars.empty], t0, calls.length)}, of which header reads ${await headerReadsOn('empty')}`);
    assert.deepEqual(lost, []);
    assert.deepEqual(errors, []);
    assert.ok((liars.empty.lies.emptyLogs ?? 0) > 0, 'the node did leave logs out');
    assert.ok((liar.verifyFailures?.['logs-missing'] ?? 0) > 0, 'it is marked');
    assert.equal(good?.verifyFailures, undefined);
  });
});
