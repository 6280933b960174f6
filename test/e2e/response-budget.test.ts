/**
 * Answers are held within a memory budget: a batch of identical 14.8 MB eth_getLogs built as one string takes
 * 445 MB for 30 items (RSS 307 -> 2,813 MB) and fails at 40 (500 "Invalid string length"). Each item is
 * counted against rpc.maxResponseBytes (32 MiB) as it arrives, an item past it is -32005 answer_too_large, and
 * the rest is written as a stream of pieces. Through the wire, against a fake node on loopback whose eth_getLogs
 * answers 10,000 logs of ~1.5 kB (the default maxResults), 14.8 MB.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
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
    // Without the budget: ~600 MB of answer built as one string (and a 500). The budget holds 32 MiB of answers;
    // the rest is the node's answers being read and parsed (rpc.maxAnswerBytesInFlight, 64 MiB) and this test's own client.
    assert.ok(peak - rssBefore < 768 * MiB, `RSS grew ${((peak - rssBefore) / MiB).toFixed(0)} MiB`);
  });
});

/**
 * Answers nobody reads: a key whose clients send calls with big answers on raw sockets and never read them. Each
 * response's bytes are counted until written, so they must not fill the budget shared by every tenant (each key,
 * account and client address holds at most rpc.responseShare of it), and a response not written within
 * server.writeTimeoutMs is cut off with its connection, giving its bytes back. Sizes scaled down: 8 MiB answers
 * (a loopback connection's kernel buffers take about 4 MiB of an answer nobody reads: a smaller one may be written
 * whole), and a budget of seven such answers and 500 kB, which seven fill but for less than a 1 MiB answer.
 */
describe('answers left unread hold at most their tenant\'s share of the response budget, and only for a while', { timeout: 120_000 }, () => {
  let g: TestGateway;
  let node: Server;
  let calls = 0;
  const sockets: Socket[] = [];
  const WRITE_TIMEOUT_MS = 5000;
  const UNREAD = 70;
  /** Seven answers of 8 MiB as the budget counts them (less the first 64 KiB, plus 128 for the envelope), and 500 kB. */
  const BUDGET = 7 * (8 * MiB + 128 - 64 * 1024) + 500_000;
  /** A result of `size` bytes: the node answers eth_call with as many bytes as its `data` asks (a hex number). */
  const results = new Map<number, string>();
  const resultOf = (size: number) => {
    let r = results.get(size);
    if (!r) results.set(size, (r = `"0x${'ab'.repeat(size / 2 - 1)}"`));
    return r;
  };

  before(async () => {
    node = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const m = JSON.parse(body);
        if (m.method === 'eth_call') calls++;
        const result = m.method === 'eth_call' ? resultOf(Number(m.params[0].data)) : m.method === 'eth_chainId' ? '"0x7"' : '"0x1"';
        res.setHeader('content-type', 'application/json');
        res.end(`{"jsonrpc":"2.0","id":${m.id},"result":${result}}`);
      });
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    g = await startTestGateway({
      networks: { big: { chainId: 7, upstream: `http://127.0.0.1:${(node.address() as { port: number }).port}` } },
      cache: { enabled: false },
      rpc: { maxResponseBytesInFlight: BUDGET, maxResponseBytes: 12 * MiB },
      server: { writeTimeoutMs: WRITE_TIMEOUT_MS, maxConnectionsPerIp: 0, maxConnectionsPerSubnet: 0 },
    });
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await g?.close();
    node?.close();
  });

  const call = (id: number, size: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_call', params: [{ to: '0x00000000000000000000000000000000000000aa', data: `0x${size.toString(16)}` }, 'latest'] });
  /** A raw connection from `localAddress` that sends one call and never reads its answer. */
  const unread = (localAddress: string, body: string) => {
    const url = new URL(g.url);
    const s = connect({ port: Number(url.port), host: url.hostname, localAddress }, () => {
      s.write(`POST /v1/big/${g.key} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    });
    s.on('error', () => {});
    sockets.push(s);
    return s;
  };

  test('another tenant is answered while one key leaves 70 answers of 8 MiB unread; the key gets its share back after server.writeTimeoutMs', async () => {
    const acct = await g.gw.accounts.createAccount({ name: 'other tenant', email: `other-${Math.random()}@example.com`, planId: 'test' });
    const other = (await g.gw.accounts.createKey(acct.id, { name: 'other' })).value;
    for (let i = 0; i < UNREAD; i++) unread('127.0.0.5', call(i, 8 * MiB));
    // Until the node has been asked what it will be (once the key's share is spent, its calls are refused before a
    // node is asked), and the answers are written as far as the kernel takes them.
    for (let seen = -1; seen !== calls;) {
      seen = calls;
      await new Promise((r) => setTimeout(r, 300));
    }
    // Ten calls of another tenant, from another address, at once: 1 MiB answers.
    const t0 = performance.now();
    const victims = await Promise.all(Array.from({ length: 10 }, (_, i) => request(`${g.url}/v1/big/${other}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: call(100 + i, MiB),
    }).then(async (r) => ({ status: r.statusCode, body: JSON.parse(await r.body.text()) }))));
    const ms = performance.now() - t0;
    const answered = victims.filter((v) => v.status === 200 && typeof v.body.result === 'string' && v.body.result.length === MiB).length;
    const busy = victims.filter((v) => v.body.error?.data?.reason === 'answers_busy').length;
    console.log(`${UNREAD} unread 8 MiB answers of one key (budget ${(BUDGET / MiB).toFixed(1)} MiB): another tenant's 10 calls of 1 MiB: ${answered} answered, ${busy} answers_busy, in ${ms.toFixed(0)} ms`);
    assert.equal(busy, 0, 'no answers_busy for another tenant');
    assert.equal(answered, 10);

    // The key's own next 8 MiB call finds its share spent while its answers wait unread ...
    const own = () => request(`${g.url}/v1/big/${g.key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: call(999, 8 * MiB) })
      .then(async (r) => ({ status: r.statusCode, body: JSON.parse(await r.body.text()) }));
    const meanwhile = await own();
    // ... and has it back once they are cut off, past server.writeTimeoutMs (its sockets never read).
    await new Promise((r) => setTimeout(r, WRITE_TIMEOUT_MS * 2.5));
    const later = await own();
    console.log(`the key's own 8 MiB call while its ${UNREAD} answers wait: ${meanwhile.status} ${meanwhile.body.error?.data?.reason ?? 'result'}; ${WRITE_TIMEOUT_MS * 2.5} ms later: ${later.status} ${later.body.error?.data?.reason ?? 'result'}`);
    assert.equal(meanwhile.body.error?.data?.reason, 'answers_busy');
    assert.equal(later.status, 200, JSON.stringify(later.body.error));
    assert.equal(later.body.result.length, 8 * MiB);
  });
});
