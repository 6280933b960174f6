/**
 * Answers are held within a memory budget (issue 17): a batch of identical 14.8 MB eth_getLogs was built as one
 * string (445 MB for 30 items, RSS 307 -> 2,813 MB; 40 items: 500 "Invalid string length"). Now each item is
 * counted against rpc.maxResponseBytes (32 MiB) as it arrives, an item past it is -32005 answer_too_large, and
 * the rest is written as a stream of pieces. Through the wire, against a fake node on loopback whose eth_getLogs
 * answers 10,000 logs of ~1.5 kB (the default maxResults), 14.8 MB.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const MiB = 1024 * 1024;
const h = (n: number, len: number) => `0x${n.toString(16).padStart(len, '0')}`;
/** 10,000 logs of ~1,480 bytes each, as JSON: what the node answers to every eth_getLogs. */
const LOGS = `[${Array.from({ length: 10_000 }, (_, i) => JSON.stringify({
  address: h(0xaa, 40), topics: [h(i, 64)], data: `0x${'ab'.repeat(560)}`, blockNumber: '0x1', transactionHash: h(i, 64),
  transactionIndex: '0x0', blockHash: h(1, 64), logIndex: h(i, 1), removed: false,
})).join(',')}]`;

describe('a batch of huge answers stays within the response budget', { timeout: 180_000 }, () => {
  let g: TestGateway;
  let node: Server;

  before(async () => {
    node = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const msg = JSON.parse(body);
        const answer = (m: { id: number; method: string }) => `{"jsonrpc":"2.0","id":${m.id},"result":${m.method === 'eth_getLogs' ? LOGS : '"0x7"'}}`;
        res.setHeader('content-type', 'application/json');
        if (!Array.isArray(msg)) return void res.end(answer(msg));
        res.write('[');
        msg.forEach((m, i) => res.write((i ? ',' : '') + answer(m)));
        res.end(']');
      });
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 }, logs: { chainId: 7, upstream: `http://127.0.0.1:${(node.address() as { port: number }).port}` } } });
  });
  after(async () => {
    await g?.close();
    node?.close();
  });

  const getLogs = (id: number) => ({ jsonrpc: '2.0', id, method: 'eth_getLogs', params: [{ fromBlock: '0x1', toBlock: '0x1' }] });

  test('40 identical 14.8 MB eth_getLogs in one batch: 200, the items past 32 MiB are -32005 answer_too_large, RSS bounded, another tenant served', async () => {
    console.log(`one answer: ${(LOGS.length / MiB).toFixed(1)} MiB`);
    const single = await g.rpc(getLogs(1), { network: 'logs' });
    assert.equal(single.status, 200);
    assert.equal(single.body.result.length, 10_000, 'one such answer alone passes whole');

    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 10);
    // Another tenant (on the embedded mainnet) calls throughout.
    let running = true;
    const waits: number[] = [];
    const victim = (async () => {
      while (running) {
        const t = performance.now();
        const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
        assert.equal(r.status, 200);
        waits.push(performance.now() - t);
      }
    })();

    const res = await request(`${g.url}/v1/logs/${g.key}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(Array.from({ length: 40 }, (_, i) => getLogs(i))),
    });
    const text = await res.body.text();
    running = false;
    await victim;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    const rssAfter = process.memoryUsage().rss;

    assert.equal(res.statusCode, 200, text.slice(0, 300));
    const items = JSON.parse(text) as Array<{ id: number; result?: unknown[]; error?: { code: number; data: { reason: string } } }>;
    const whole = items.filter((x) => Array.isArray(x.result) && x.result.length === 10_000).length;
    const tooLarge = items.filter((x) => x.error?.data.reason === 'answer_too_large').length;
    const busy = items.filter((x) => x.error?.data.reason === 'answers_busy').length;
    waits.sort((a, b) => a - b);
    console.log(`40 x 14.8 MB eth_getLogs: HTTP ${res.statusCode}, ${(text.length / MiB).toFixed(1)} MiB answered; ${whole} whole, ${tooLarge} answer_too_large, ${busy} answers_busy`);
    console.log(`RSS before ${(rssBefore / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB (+${((peak - rssBefore) / MiB).toFixed(0)}), after ${(rssAfter / MiB).toFixed(0)} MiB`);
    console.log(`another tenant: ${waits.length} calls meanwhile, p50 ${waits[Math.floor(waits.length / 2)]?.toFixed(1)} ms, max ${waits.at(-1)?.toFixed(0)} ms`);

    assert.deepEqual(items.map((x) => x.id), Array.from({ length: 40 }, (_, i) => i), 'every item answered, in order');
    assert.equal(whole + tooLarge + busy, 40, 'each item is a whole answer or a -32005 refusal');
    assert.ok(whole >= 1, 'what fits is answered');
    assert.ok(text.length <= 32 * MiB, `the response is within rpc.maxResponseBytes: ${text.length}`);
    // Before: ~600 MB of answer built as one string (and 500). The budget holds 32 MiB of answers; the rest is the
    // node's answers being read and parsed (rpc.maxAnswerBytesInFlight, 64 MiB) and this test's own client.
    assert.ok(peak - rssBefore < 768 * MiB, `RSS grew ${((peak - rssBefore) / MiB).toFixed(0)} MiB`);
  });
});
