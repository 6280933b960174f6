import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { WebSocketServer, type WebSocket } from 'ws';
import { GatewayError } from '../errors/gateway-error.ts';
import { CallAbort } from '../errors/on-abort.ts';
import { AnswerBudget, UNBOUNDED_ANSWERS } from '../limits/answer-budget.ts';
import { HttpUpstream } from './http-upstream.ts';

/**
 * A node on loopback that answers JSON-RPC by HTTP and over WebSocket on the same port, as anvil does, and counts
 * what came which way. `quiet`: it reads WebSocket calls and does not answer them (a node that stalls on the socket).
 */
let httpRequests = 0;
let wsMessages: string[] = [];
let quiet = false;
let reverse = false;
let server: Server;
let wss: WebSocketServer;
let sockets: WebSocket[] = [];
let up: HttpUpstream;
let port = 0;

type Call = { id: number; method: string; params: unknown[] };
/** `net_peerCount` is a method this node lacks: over HTTP it says so; over WebSocket it garbles it, as anvil does. */
const answerOf = (c: Call, ws: boolean) => (c.method === 'eth_estimateGas'
  ? { jsonrpc: '2.0', id: c.id, result: 'x'.repeat(4000) } // an answer bigger than the small budget's (below)
  : c.method !== 'net_peerCount'
  ? { jsonrpc: '2.0', id: c.id, result: `${c.method}:${JSON.stringify(c.params)}` }
  : { jsonrpc: '2.0', id: c.id, error: ws ? { code: -32602, message: 'data did not match any variant of untagged enum EthRpcCall' } : { code: -32601, message: 'Method not found' } });
const answer = (doc: Call | Call[], ws = false) => JSON.stringify(Array.isArray(doc) ? (reverse ? [...doc].reverse() : doc).map((c) => answerOf(c, ws)) : answerOf(doc, ws));

before(async () => {
  server = createServer((req, res) => {
    httpRequests++;
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => res.end(answer(JSON.parse(body))));
  });
  wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => {
    sockets.push(ws);
    ws.on('message', (data) => {
      wsMessages.push(String(data));
      const doc = JSON.parse(String(data));
      // A message this node cannot read over the socket: its answer has id null, as anvil's to a body it rejects.
      if (String(data).includes('"unreadable"')) return void ws.send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }));
      if (!quiet || doc.method === 'eth_estimateGas') ws.send(answer(doc, true));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as { port: number }).port;
  up = new HttpUpstream(`http://127.0.0.1:${port}`, UNBOUNDED_ANSWERS, 4, `ws://127.0.0.1:${port}`);
});
after(async () => {
  await up.close();
  wss.close();
  await new Promise((r) => server.close(r));
});
beforeEach(async () => {
  await up.lane!.whenOpen();
  httpRequests = 0;
  wsMessages = [];
  quiet = false;
  reverse = false;
});

describe("a node's WebSocket lane", () => {
  test('light reads and calls that run code go over the socket, every other call by HTTP', async () => {
    const a = await up.call('eth_getBalance', ['0xab', 'latest'], 1000, { light: true });
    assert.equal(a.result, 'eth_getBalance:["0xab","latest"]');
    assert.equal(a.raw, '"eth_getBalance:[\\"0xab\\",\\"latest\\"]"', 'the result passes on as the node wrote it');
    assert.deepEqual([wsMessages.length, httpRequests], [1, 0]);
    const c = await up.call('eth_call', [{ to: '0x01' }, 'latest'], 1000, { socket: true });
    assert.equal(c.result, 'eth_call:[{"to":"0x01"},"latest"]');
    assert.deepEqual([wsMessages.length, httpRequests], [2, 0], 'a call that runs code: over the socket');
    const t = await up.call('debug_traceCall', [{ to: '0x01' }, 'latest'], 1000);
    assert.equal(t.result, 'debug_traceCall:[{"to":"0x01"},"latest"]');
    assert.deepEqual([wsMessages.length, httpRequests], [2, 1], 'anything else: by HTTP');
  });

  test("a client's batch of light reads and calls that run code goes over the socket as one message", async () => {
    const got = await Promise.all([
      up.call('eth_getBalance', ['0x1', 'latest'], 1000, { light: true }),
      up.call('eth_call', [{ to: '0x01' }, 'latest'], 1000, { socket: true }),
    ]);
    assert.deepEqual(got.map((a) => a.result), ['eth_getBalance:["0x1","latest"]', 'eth_call:[{"to":"0x01"},"latest"]']);
    assert.equal(httpRequests, 0);
    assert.equal(wsMessages.length, 1);
    assert.ok(wsMessages[0].startsWith('['), wsMessages[0]);
    await Promise.all([up.call('eth_call', [{ to: '0x01' }, 'latest'], 1000, { socket: true }), up.call('eth_getLogs', [{}], 1000)]);
    assert.deepEqual([wsMessages.length, httpRequests], [1, 1], 'with a call that may go only by HTTP in it: the batch by HTTP');
  });

  test('a call whose params hold a lone surrogate goes by HTTP (the node could not read it, and would answer with id null)', async () => {
    const a = await up.call('eth_call', [{ to: '0x01' }, 'latest', { '0x01': '\ud800' }], 1000, { socket: true });
    assert.equal(a.result, 'eth_call:[{"to":"0x01"},"latest",{"0x01":"\\ud800"}]');
    assert.deepEqual([wsMessages.length, httpRequests], [0, 1]);
  });

  test('an answer with id null (a call the node could not read): the calls then waiting get their own answers, and the unread one is asked again by HTTP, well before its time-out', async () => {
    const p = up.call('eth_blockNumber', [], 10_000, { light: true }); // in flight, so the two below share a turn's batch
    await Promise.resolve();
    const [a, b] = await Promise.all([
      new Promise((r) => setImmediate(r)).then(() => up.call('eth_call', [{ to: '0x01' }, 'latest', 'unreadable'], 10_000, { socket: true })),
      new Promise((r) => setImmediate(r)).then(() => up.call('eth_getBalance', ['0x1', 'latest'], 10_000, { light: true })),
    ]);
    assert.equal((await p).result, 'eth_blockNumber:[]');
    assert.equal(b.result, 'eth_getBalance:["0x1","latest"]');
    assert.equal(a.result, 'eth_call:[{"to":"0x01"},"latest","unreadable"]', 'the unread call, answered by HTTP');
    assert.equal(httpRequests, 1, 'only the unread call went by HTTP');
    assert.ok(wsMessages.some((m) => m.includes('unreadable')), 'it was sent over the socket first');
  });

  test('calls that run code are never shared: each goes alone, also when made in the same turn as light reads', async () => {
    const p = up.call('eth_blockNumber', [], 1000, { light: true }); // in flight, so the reads below wait for the turn's end
    await Promise.resolve();
    const later = await new Promise((r) => setImmediate(r)).then(() => Promise.all([
      up.call('eth_getBalance', ['0x1', 'latest'], 1000, { light: true }), up.call('eth_getBalance', ['0x2', 'latest'], 1000, { light: true }),
    ].concat([1, 2].map(() => new Promise((r) => setImmediate(r)).then(() => up.call('eth_call', [{ to: '0x01' }, 'latest'], 1000, { socket: true }))))));
    await p;
    assert.equal(later.length, 4);
    assert.equal(httpRequests, 0);
    const calls = wsMessages.filter((m) => m.includes('eth_call'));
    assert.equal(calls.length, 2, wsMessages.join(' '));
    assert.ok(calls.every((m) => m.startsWith('{')), `each call alone: ${calls.join(' ')}`);
  });

  test("light reads of one turn share one message, their answers matched by id in any order", async () => {
    reverse = true;
    const p = up.call('eth_blockNumber', [], 1000, { light: true }); // alone and nothing in flight: goes at once
    await Promise.resolve();
    const later = [0, 1, 2].map((i) => new Promise((r) => setImmediate(r)).then(() => up.call('eth_getBalance', [`0x${i}`, 'latest'], 1000, { light: true })));
    const got = await Promise.all([p, ...later]);
    assert.deepEqual(got.map((a) => a.result), ['eth_blockNumber:[]', 'eth_getBalance:["0x0","latest"]', 'eth_getBalance:["0x1","latest"]', 'eth_getBalance:["0x2","latest"]']);
    assert.equal(httpRequests, 0);
    assert.ok(wsMessages.some((m) => m.startsWith('[')), `a batch went over the socket: ${wsMessages.join(' ')}`);
  });

  test("an answer the socket garbles (anvil's one -32602 for any call it cannot decode) is asked again by HTTP", async () => {
    const a = await up.call('net_peerCount', [], 1000, { light: true });
    assert.deepEqual(a.error, { code: -32601, message: 'Method not found' }, "the node's own answer, which lets an adapter answer");
    assert.deepEqual([wsMessages.length, httpRequests], [1, 1]);
    const p = up.call('eth_blockNumber', [], 1000, { light: true });
    await Promise.resolve();
    const [, b] = await Promise.all([p, new Promise((r) => setImmediate(r)).then(() => Promise.all([up.call('net_peerCount', [], 1000, { light: true }), up.call('eth_chainId', [], 1000, { light: true })]))]);
    assert.deepEqual(b.map((x) => x.error?.code ?? x.result), [-32601, 'eth_chainId:[]'], 'in a batch too, the garbled item alone');
  });

  test('a node that stops answering on the socket: the call ends at its time-out as UPSTREAM_TIMEOUT', async () => {
    quiet = true;
    await assert.rejects(up.call('eth_blockNumber', [], 200, { light: true }), (e: unknown) => e instanceof GatewayError && e.entry === 'UPSTREAM_TIMEOUT');
    assert.equal(wsMessages.length, 1);
  });

  test('an aborted call ends at once with its reason, and its late answer is dropped', async () => {
    quiet = true;
    const abort = new CallAbort();
    const p = up.call('eth_blockNumber', [], 10_000, { light: true, signal: abort });
    await once(sockets.at(-1)!, 'message');
    const reason = new Error('the caller left');
    abort.abort(reason);
    await assert.rejects(p, (e) => e === reason);
    quiet = false;
    assert.equal((await up.call('eth_chainId', [], 1000, { light: true })).result, 'eth_chainId:[]', 'the socket still serves the next call');
  });

  test("a socket that drops is told to the operator once, its address redacted, and again when it is back", async () => {
    const lines: string[] = [];
    let heard: (() => void) | undefined;
    const say = (line: string) => { lines.push(line); heard?.(); };
    const said = (n: number) => new Promise<void>((resolve) => { heard = () => { if (lines.length >= n) resolve(); }; heard(); });
    const log = { warn: (o: { node: string }, m: string) => say(`warn ${o.node} ${m}`), info: (o: { node: string }, m: string) => say(`info ${o.node} ${m}`) };
    const port = (server.address() as { port: number }).port;
    const key = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    // This lane's own socket on the node's side, kept out of the list the other tests use.
    const ours = new Promise<WebSocket>((resolve) => wss.once('connection', (ws) => { sockets.splice(sockets.indexOf(ws), 1); resolve(ws); }));
    const mine = new HttpUpstream(`http://127.0.0.1:${port}`, UNBOUNDED_ANSWERS, 1, `ws://127.0.0.1:${port}/v3/${key}`, log as never);
    try {
      await mine.lane!.whenOpen();
      assert.deepEqual(lines, [], 'nothing said while all is well');
      const again = new Promise<WebSocket>((resolve) => wss.once('connection', (ws) => { sockets.splice(sockets.indexOf(ws), 1); resolve(ws); }));
      (await ours).terminate();
      await said(2);
      await again;
      assert.equal(lines.length, 2, lines.join('\n'));
      assert.match(lines[0], /^warn ws:\/\/127\.0\.0\.1:\d+\/v3\/\*\*\* the node's WebSocket closed: light reads go by HTTP/);
      assert.match(lines[1], /^info .* the node's WebSocket is open again/);
      assert.ok(!lines.join('').includes(key), 'the key in its address is never logged');
    } finally {
      await mine.close();
    }
  });

  test('a dropped socket: its calls are asked again by HTTP and answered, the next go by HTTP, and the socket comes back', async () => {
    quiet = true;
    const p = up.call('eth_blockNumber', [], 10_000, { light: true });
    const socket = sockets.at(-1)!;
    await once(socket, 'message');
    socket.terminate();
    assert.equal((await p).result, 'eth_blockNumber:[]', 'the call lost with the socket, answered by HTTP');
    assert.equal(httpRequests, 1);
    quiet = false;
    assert.equal((await up.call('eth_chainId', [], 1000, { light: true })).result, 'eth_chainId:[]');
    assert.equal(httpRequests, 2, 'by HTTP while the socket is down');
    await up.lane!.whenOpen();
    await up.call('eth_chainId', [], 1000, { light: true });
    assert.equal(httpRequests, 2, 'over the socket again once it is back');
  });

  test('an answer over rpc.maxAnswerBytes on the socket: it fails alone as -32005, the calls waiting are answered by HTTP, and calls that run code keep to HTTP', async () => {
    const mine = new HttpUpstream(`http://127.0.0.1:${port}`, new AnswerBudget(1000, 100_000), 4, `ws://127.0.0.1:${port}`);
    try {
      await mine.lane!.whenOpen();
      quiet = true; // light reads wait on the socket; the big answer comes at once
      const waiting = mine.call('eth_blockNumber', [], 10_000, { light: true });
      while (!wsMessages.some((m) => m.includes('eth_blockNumber'))) await new Promise((r) => setImmediate(r));
      const big = mine.call('eth_estimateGas', [{ to: '0x01' }], 10_000, { socket: true });
      await assert.rejects(big, (e: unknown) => e instanceof GatewayError && e.entry === 'ANSWER_TOO_LARGE');
      assert.equal((await waiting).result, 'eth_blockNumber:[]', 'answered by HTTP, not failed');
      quiet = false;
      await mine.lane!.whenOpen();
      const before = { ws: wsMessages.length, http: httpRequests };
      await mine.call('eth_call', [{ to: '0x01' }, 'latest'], 1000, { socket: true });
      await mine.call('eth_chainId', [], 1000, { light: true });
      assert.deepEqual([wsMessages.length - before.ws, httpRequests - before.http], [1, 1], 'eth_call by HTTP, the light read over the socket again');
    } finally {
      await mine.close();
    }
  });

  test("new heads the node pushes reach the follower, again once its socket reopens; a follower stopped is unsubscribed on the node", async () => {
    const mine = new HttpUpstream(`http://127.0.0.1:${port}`, UNBOUNDED_ANSWERS, 4, `ws://127.0.0.1:${port}`);
    try {
      await mine.lane!.whenOpen();
      const heads: unknown[] = [];
      let heard = () => {};
      const stop = mine.followHeads((h) => { heads.push(h); heard(); })!;
      const subscribed = async (times: number) => {
        while (wsMessages.filter((m) => m.includes('"eth_subscribe"')).length < times) await new Promise((r) => setImmediate(r));
        return sockets.at(-1)!;
      };
      // The fake node names the subscription after the call (its answer's result, as any string a node names it by).
      const push = (ws: WebSocket, subscription: string, n: number) => new Promise<void>((resolve) => {
        heard = resolve;
        ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription, result: { number: `0x${n.toString(16)}` } } }));
      });
      const named = 'eth_subscribe:["newHeads"]';
      let node = await subscribed(1);
      node.send(JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription: 'another', result: { number: '0x0' } } }));
      await push(node, named, 1);
      assert.deepEqual(heads, [{ number: '0x1' }], "another subscription's notification is not the follower's");
      node.terminate();
      node = await subscribed(2);
      await push(node, named, 2);
      assert.deepEqual(heads, [{ number: '0x1' }, { number: '0x2' }], 'subscribed again on the new socket');
      stop();
      while (!wsMessages.some((m) => m.includes('"eth_unsubscribe"'))) await new Promise((r) => setImmediate(r));
      assert.deepEqual(JSON.parse(wsMessages.find((m) => m.includes('"eth_unsubscribe"'))!).params, [named]);
    } finally {
      await mine.close();
    }
  });
});
