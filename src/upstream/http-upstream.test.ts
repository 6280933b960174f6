import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { WebSocketServer } from 'ws';
import { after, before, describe, test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.ts';
import { responseJson } from '../rpc/respond.ts';
import { AnswerBudget, UNBOUNDED_ANSWERS } from '../limits/answer-budget.ts';
import { CallAbort } from '../errors/on-abort.ts';
import { HttpUpstream } from './http-upstream.ts';

/**
 * A node that answers each call with `answer(id)`: the body it sends, given the id of the call; a batch with
 * `answerBatch` of its calls. `requests` counts the HTTP requests it got.
 */
let answer: (id: number) => string = () => '';
type Call = { id: number; method: string; params: unknown[] };
const geth = (calls: Call[]) => `[${calls.map((c) => `{"jsonrpc":"2.0","id":${c.id},"result":${JSON.stringify(c.params[0])}}`).join(',')}]`;
let answerBatch: (calls: Call[]) => string = geth;
let requests = 0;
let server: Server;
let node: HttpUpstream;

before(async () => {
  server = createServer((req, res) => {
    requests++;
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const doc = JSON.parse(body);
      res.end(Array.isArray(doc) ? answerBatch(doc) : answer(doc.id));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  node = new HttpUpstream(`http://127.0.0.1:${(server.address() as { port: number }).port}`, UNBOUNDED_ANSWERS, 2);
});
after(async () => {
  await node.close();
  await new Promise((r) => server.close(r));
});

describe('HttpUpstream answers', () => {
  test("pass a result on byte for byte, numbers beyond 2^53 included", async () => {
    const result = '{"number":"0x10","big":123456789012345678901234567890,"logs":[{"data":"0x00"}]}';
    answer = (id) => `{"jsonrpc":"2.0","id":${id},"result":${result}}\n`;
    const a = await node.call('eth_getBlockByNumber', ['0x10', false], 1000);
    assert.equal(a.raw, result);
    assert.equal((a.result as { number: string }).number, '0x10', 'the parsed result is there for adapters');
    assert.equal(responseJson(7, a), `{"jsonrpc":"2.0","id":7,"result":${result}}`);
  });

  test('in another member order or with more members are parsed and written again', async () => {
    for (const make of [
      (id: number) => `{"jsonrpc":"2.0","result":"0x1","id":${id}}`,
      (id: number) => `{"jsonrpc":"2.0","id":${id},"result":"0x1","extra":true}`,
      (id: number) => `{"jsonrpc":"2.0", "id":${id}, "result": "0x1"}`,
    ]) {
      answer = make;
      const a = await node.call('eth_blockNumber', [], 1000);
      assert.equal(a.raw, undefined, answer(1));
      assert.equal(responseJson(1, a), '{"jsonrpc":"2.0","id":1,"result":"0x1"}');
    }
  });

  test('pass JSON-RPC errors through', async () => {
    answer = (id) => `{"jsonrpc":"2.0","id":${id},"error":{"code":-32000,"message":"boom"}}`;
    assert.deepEqual(await node.call('eth_call', [], 1000), { error: { code: -32000, message: 'boom' } });
  });

  test('that are not JSON-RPC are 503 (-32002)', async () => {
    for (const body of ['<html>bad gateway</html>', '[]', '{"jsonrpc":"2.0","id":1}']) {
      answer = () => body;
      await assert.rejects(node.call('eth_blockNumber', [], 1000), (e: GatewayError) => e.status === 503 && e.code === -32002);
    }
  });
});

describe('HttpUpstream batching', () => {
  test('calls made in the same tick reach the node as one batch, each answer going to its own call', async () => {
    // The node answers in reverse order: matching is by id, not position.
    answerBatch = (calls) => geth([...calls].reverse());
    requests = 0;
    const answers = await Promise.all(['0xa', '0xb', '0xc', '0xd'].map((v) => node.call('eth_getBalance', [v], 1000)));
    assert.equal(requests, 1);
    assert.deepEqual(answers.map((a) => a.result), ['0xa', '0xb', '0xc', '0xd']);
    assert.equal(responseJson(5, answers[2]), '{"jsonrpc":"2.0","id":5,"result":"0xc"}');
  });

  test('a node that refuses batches, or leaves a call out, gets those calls again one by one', async () => {
    const singles: string[] = [];
    answer = (id) => `{"jsonrpc":"2.0","id":${id},"result":"single"}`;
    // Refused whatever its size (a batch refused for its size is below: it is sent again in smaller batches).
    answerBatch = () => '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are disabled"}}';
    const refused = await Promise.all([1, 2, 3].map((v) => node.call('eth_getBalance', [v], 1000)));
    assert.deepEqual(refused.map((a) => a.result), ['single', 'single', 'single']);
    answerBatch = () => '<html>400 batch requests are not supported</html>';
    const notJson = await Promise.all([1, 2].map((v) => node.call('eth_getBalance', [v], 1000)));
    assert.deepEqual(notJson.map((a) => a.result), ['single', 'single']);

    answerBatch = (calls) => geth(calls.filter((c) => c.params[0] !== 'lost'));
    answer = (id) => { singles.push(String(id)); return `{"jsonrpc":"2.0","id":${id},"result":"again"}`; };
    const partial = await Promise.all(['x', 'lost', 'y'].map((v) => node.call('eth_getBalance', [v], 1000)));
    assert.deepEqual(partial.map((a) => a.result), ['x', 'again', 'y']);
    assert.equal(singles.length, 1);

    // geth past its answer size limit: the items it did not run come back with -32003 "response too large".
    answerBatch = (calls) => `[${calls.map((c, i) => (i === 0
      ? `{"jsonrpc":"2.0","id":${c.id},"result":"big"}`
      : `{"jsonrpc":"2.0","id":${c.id},"error":{"code":-32003,"message":"response too large"}}`)).join(',')}]`;
    const large = await Promise.all(['a', 'b', 'c'].map((v) => node.call('eth_getBlockByNumber', [v], 1000)));
    assert.deepEqual(large.map((a) => a.result), ['big', 'again', 'again']);
  });

  test("an item's JSON-RPC error stays that item's; a dead node fails every call of the batch with 503", async () => {
    answerBatch = (calls) => `[${calls.map((c) => (c.params[0] === 'bad'
      ? `{"jsonrpc":"2.0","id":${c.id},"error":{"code":3,"message":"execution reverted","data":"0x"}}`
      : `{"jsonrpc":"2.0","id":${c.id},"result":"ok"}`)).join(',')}]`;
    const [good, bad] = await Promise.all([node.call('eth_call', ['good'], 1000), node.call('eth_call', ['bad'], 1000)]);
    assert.deepEqual(good, { result: 'ok' });
    assert.deepEqual(bad, { error: { code: 3, message: 'execution reverted', data: '0x' } });

    const dead = new HttpUpstream('http://127.0.0.1:9');
    const all = await Promise.allSettled([dead.call('eth_blockNumber', [], 500), dead.call('eth_chainId', [], 500)]);
    await dead.close();
    for (const r of all) assert.ok(r.status === 'rejected' && (r.reason as GatewayError).code === -32002);
  });

  test('calls with different time-outs are not held in one batch', async () => {
    answerBatch = geth;
    answer = (id) => `{"jsonrpc":"2.0","id":${id},"result":"single"}`;
    requests = 0;
    const answers = await Promise.all([
      node.call('eth_getBalance', ['r1'], 1000), node.call('debug_traceTransaction', ['t'], 60_000), node.call('eth_getBalance', ['r2'], 1000),
    ]);
    assert.deepEqual(answers.map((a) => a.result), ['r1', 'single', 'r2']);
    assert.equal(requests, 2);
  });

  test("a client's reads of different budgets (each with its own deadline) share one batch; a trace does not", async () => {
    answerBatch = geth;
    answer = (id) => `{"jsonrpc":"2.0","id":${id},"result":"single"}`;
    requests = 0;
    const signal = () => new CallAbort();
    const answers = await Promise.all([
      node.call('eth_getBalance', ['r1'], 5_000, { signal: signal() }), node.call('eth_call', ['r2'], 30_000, { signal: signal() }),
      node.call('debug_traceTransaction', ['t'], 120_000, { signal: signal(), trace: true }), node.call('eth_getCode', ['r3'], 5_000, { signal: signal() }),
    ]);
    assert.deepEqual(answers.map((a) => a.result), ['r1', 'r2', 'single', 'r3']);
    assert.equal(requests, 2, 'the three reads in one node request, the trace in another');
  });

  /**
   * `make(i)` called from `n` callbacks of one turn of the event loop, each in a tick of its own: as `n` requests read
   * in one turn. Immediates queued together run in one check phase, whatever the machine's load; timers of 0 ms do
   * not (a pause between setting them puts them in different turns: 3 node requests instead of 2 on a loaded CI).
   */
  const fromCallers = <T>(n: number, make: (i: number) => Promise<T>): Promise<T[]> =>
    Promise.all(Array.from({ length: n }, (_, i) => new Promise<T>((resolve, reject) => setImmediate(() => make(i).then(resolve, reject)))));

  test("light reads of many callers in one turn of the event loop share one node request; other callers' calls do not", async () => {
    const up = new HttpUpstream(node.url, UNBOUNDED_ANSWERS, 8);
    try {
      answerBatch = (calls) => geth([...calls].reverse());
      answer = (id) => `{"jsonrpc":"2.0","id":${id},"result":"single"}`;
      requests = 0;
      const light = await fromCallers(6, (i) => up.call('eth_getBalance', [`0x${i}`], 5_000, { signal: new CallAbort(), light: true }));
      // The first finds nothing in flight to the node and goes at once, alone (a client alone waits for no turn's
      // end); the five after it, with a node request in flight, share one.
      assert.deepEqual(light.map((a) => a.result), ['single', '0x1', '0x2', '0x3', '0x4', '0x5'], 'each caller gets its own answer');
      assert.equal(requests, 2, 'six callers, two node requests');

      // eth_call executes code: another caller's may take a second; each caller's goes alone.
      requests = 0;
      const heavy = await fromCallers(3, (i) => up.call('eth_call', [`0x${i}`], 30_000, { signal: new CallAbort() }));
      assert.deepEqual(heavy.map((a) => a.result), ['single', 'single', 'single']);
      assert.equal(requests, 3);

      // A caller alone in its turn: a single call, not a batch of one.
      requests = 0;
      assert.equal((await up.call('eth_getBalance', ['0xa'], 5_000, { light: true })).result, 'single');
      assert.equal(requests, 1);
    } finally {
      await up.close();
    }
  });

  test('a node that refuses a batch of light reads gets them alone from then on, each sent once', async () => {
    const up = new HttpUpstream(node.url, UNBOUNDED_ANSWERS, 8);
    try {
      answer = (id) => `{"jsonrpc":"2.0","id":${id},"result":"single"}`;
      answerBatch = () => '<html>400 batch requests are not supported</html>';
      requests = 0;
      const first = await fromCallers(3, () => up.call('eth_getBalance', ['0x1'], 5_000, { light: true }));
      assert.deepEqual(first.map((a) => a.result), ['single', 'single', 'single']);
      assert.equal(requests, 4, 'the refused batch, then each call alone');
      requests = 0;
      const then = await fromCallers(3, () => up.call('eth_getBalance', ['0x1'], 5_000, { light: true }));
      assert.deepEqual(then.map((a) => a.result), ['single', 'single', 'single']);
      assert.equal(requests, 3, 'no batch tried again at once');
    } finally {
      await up.close();
    }
  });
});

/** Resolves once two of the calls have failed (those cut off), whatever the others do. */
function settleTwo(calls: Promise<unknown>[]): Promise<void> {
  let failed = 0;
  return new Promise((r) => { for (const c of calls) c.catch(() => { if (++failed === 2) r(); }); });
}

describe('the answers held for all calls at once are bounded (rpc.maxAnswerBytesInFlight)', () => {
  test('a call whose answer would pass the budget is cut off with -32005 answers_busy; the budget comes back whole', async () => {
    // Each answer: 600 kB written at once, then held open until `finish` is called: answers in flight together.
    const open: Array<() => void> = [];
    let opened: () => void = () => {};
    const answersOpen = (n: number) => new Promise<void>((r) => { opened = () => { if (open.length >= n) r(); }; opened(); });
    const big = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const { id } = JSON.parse(body);
        res.write(`{"jsonrpc":"2.0","id":${id},"result":"0x${'ab'.repeat(300 * 1024)}`);
        open.push(() => res.end('"}'));
        opened();
      });
    });
    await new Promise<void>((r) => big.listen(0, '127.0.0.1', r));
    const budget = new AnswerBudget(1024 * 1024, 2 * 1024 * 1024);
    const up = new HttpUpstream(`http://127.0.0.1:${(big.address() as { port: number }).port}`, budget, 8);
    try {
      // Different time-outs: each call its own HTTP request, as eight callers would be.
      const calls = Array.from({ length: 5 }, (_, i) => up.call('debug_traceTransaction', [i], 10_000 + i));
      const settled = Promise.allSettled(calls);
      // Three answers of 600 kB fit in 2 MiB; the fourth and fifth pass it and are cut off as their bytes arrive.
      await answersOpen(5);
      // Two are refused while the three others are still held open by the node.
      await Promise.race([settled.then(() => assert.fail('every call settled while three answers were held open')), settleTwo(calls)]);
      for (const finish of open) finish();
      const results = await settled;
      const busy = results.filter((s) => s.status === 'rejected');
      assert.equal(busy.length, 2, 'two answers passed the budget');
      for (const s of busy) {
        const e = (s as PromiseRejectedResult).reason as GatewayError;
        assert.equal(e.code, -32005);
        assert.match(e.message, /holds 2097152 bytes of node answers/);
      }
      assert.equal(results.filter((s) => s.status === 'fulfilled').length, 3);
      assert.equal(budget.inFlight, 0, 'every byte taken was given back');
      // With the budget free again, a call of the same size is answered.
      const again = up.call('debug_traceTransaction', ['again'], 10_000);
      await answersOpen(6);
      open[5]();
      assert.equal(((await again).result as string).length, 2 + 600 * 1024);
    } finally {
      await up.close();
      big.close();
    }
  });
});

describe('HttpUpstream in front of a provider', () => {
  /** A provider that notes each request's headers and how many calls each batch held; batches over `max` refused. */
  async function provider(max: number, refusal: string) {
    const seen: Array<{ headers: Record<string, string | string[] | undefined>; calls: number }> = [];
    const s = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        const doc = JSON.parse(body);
        const calls: Call[] = Array.isArray(doc) ? doc : [doc];
        seen.push({ headers: req.headers, calls: calls.length });
        if (calls.length > max) return void res.end(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":${JSON.stringify(refusal)}}}`);
        res.end(Array.isArray(doc) ? geth(calls) : `{"jsonrpc":"2.0","id":${doc.id},"result":"0x1"}`);
      });
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return { seen, port: (s.address() as { port: number }).port, close: () => new Promise((r) => s.close(r)) };
  }

  test("a URL's user:password@ goes as Basic Authorization, never in the label; configured headers go with every request", async () => {
    const p = await provider(100, 'batch too large');
    const up = new HttpUpstream(`http://alice:s%40cret@127.0.0.1:${p.port}/rpc`, UNBOUNDED_ANSWERS, 2, undefined, undefined, { 'x-api-key': 'k-123' });
    try {
      await up.call('eth_blockNumber', [], 1000);
      assert.equal(p.seen[0].headers.authorization, 'Basic ' + Buffer.from('alice:s@cret').toString('base64'));
      assert.equal(p.seen[0].headers['x-api-key'], 'k-123');
      assert.ok(!up.label.includes('alice') && !up.label.includes('cret'), up.label);
    } finally {
      await up.close();
      await p.close();
    }
  });

  test("the provider's headers go with its WebSocket's handshake too", async () => {
    const seen: Array<string | undefined> = [];
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    wss.on('connection', (ws, req) => {
      seen.push(req.headers['x-api-key'] as string | undefined);
      ws.on('message', (m) => {
        const doc = JSON.parse(String(m));
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: doc.id, result: '0x2' }));
      });
    });
    await new Promise((r) => wss.once('listening', r));
    const p = await provider(100, 'batch too large');
    const up = new HttpUpstream(`http://127.0.0.1:${p.port}`, UNBOUNDED_ANSWERS, 2, `ws://127.0.0.1:${(wss.address() as { port: number }).port}`, undefined, { 'x-api-key': 'k-ws' });
    try {
      for (let i = 0; i < 50 && up.socketState() !== 'open'; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(await up.call('eth_blockNumber', [], 1000, { light: true }), { result: '0x2', raw: '"0x2"' });
      assert.deepEqual(seen, ['k-ws']);
    } finally {
      await up.close();
      await p.close();
      await new Promise((r) => wss.close(r));
    }
  });

  test('a batch refused for its size ("maximum batch size is 10") is sent again in batches of 10, and later ones too', async () => {
    const p = await provider(10, 'maximum batch size is 10');
    const up = new HttpUpstream(`http://127.0.0.1:${p.port}`, UNBOUNDED_ANSWERS, 2);
    try {
      const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => up.call('eth_getBalance', [`0x${i}`], 1000)));
      assert.deepEqual(answers.map((a) => a.result), Array.from({ length: 25 }, (_, i) => `0x${i}`));
      assert.equal(up.maxBatch, 10);
      assert.deepEqual(p.seen.map((s) => s.calls), [25, 10, 10, 5]);
      p.seen.length = 0;
      await Promise.all(Array.from({ length: 12 }, (_, i) => up.call('eth_getBalance', [`0x${i}`], 1000)));
      assert.deepEqual(p.seen.map((s) => s.calls), [10, 2], 'no batch over the size learnt');
    } finally {
      await up.close();
      await p.close();
    }
  });

  test('a refusal naming no size halves the batch', async () => {
    const p = await provider(6, 'batch too large');
    const up = new HttpUpstream(`http://127.0.0.1:${p.port}`, UNBOUNDED_ANSWERS, 2);
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => up.call('eth_getBalance', [`0x${i}`], 1000)));
      assert.equal(answers.length, 20);
      assert.ok(up.maxBatch <= 6, `maxBatch ${up.maxBatch}`);
      assert.ok(answers.every((a, i) => a.result === `0x${i}`));
    } finally {
      await up.close();
      await p.close();
    }
  });
});
