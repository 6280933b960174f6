import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { WebSocketServer, type WebSocket } from 'ws';
import { GatewayError } from '../errors/gateway-error.ts';
import { CallAbort } from '../errors/on-abort.ts';
import { UNBOUNDED_ANSWERS } from '../limits/answer-budget.ts';
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

type Call = { id: number; method: string; params: unknown[] };
/** `net_peerCount` is a method this node lacks: over HTTP it says so; over WebSocket it garbles it, as anvil does. */
const answerOf = (c: Call, ws: boolean) => (c.method !== 'net_peerCount'
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
      if (!quiet) ws.send(answer(JSON.parse(String(data)), true));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
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
  test('light reads go over the socket, every other call by HTTP', async () => {
    const a = await up.call('eth_getBalance', ['0xab', 'latest'], 1000, { light: true });
    assert.equal(a.result, 'eth_getBalance:["0xab","latest"]');
    assert.equal(a.raw, '"eth_getBalance:[\\"0xab\\",\\"latest\\"]"', 'the result passes on as the node wrote it');
    assert.deepEqual([wsMessages.length, httpRequests], [1, 0]);
    const c = await up.call('eth_call', [{ to: '0x01' }, 'latest'], 1000);
    assert.equal(c.result, 'eth_call:[{"to":"0x01"},"latest"]');
    assert.deepEqual([wsMessages.length, httpRequests], [1, 1], 'not a light read: by HTTP');
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

  test('a dropped socket: its calls fail as unavailable, the next go by HTTP, and the socket comes back', async () => {
    quiet = true;
    const p = up.call('eth_blockNumber', [], 10_000, { light: true });
    const socket = sockets.at(-1)!;
    await once(socket, 'message');
    socket.terminate();
    await assert.rejects(p, (e: unknown) => e instanceof GatewayError && e.entry === 'UPSTREAM_UNAVAILABLE');
    quiet = false;
    assert.equal((await up.call('eth_chainId', [], 1000, { light: true })).result, 'eth_chainId:[]');
    assert.equal(httpRequests, 1, 'by HTTP while the socket is down');
    await up.lane!.whenOpen();
    await up.call('eth_chainId', [], 1000, { light: true });
    assert.equal(httpRequests, 1, 'over the socket again once it is back');
  });
});
