import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** Every rule of docs/decisions.md §3 and the catalogue rows the core owns, through the wire. */
describe('JSON-RPC framing and the error catalogue on the wire', () => {
  let g: TestGateway;
  let slow: Server;
  let slowUrl: string;

  before(async () => {
    // A node that never answers in time, and one that is not there at all.
    slow = createServer((_req, res) => setTimeout(() => res.end('{"jsonrpc":"2.0","id":1,"result":"0x1"}'), 1500));
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    slowUrl = `http://127.0.0.1:${(slow.address() as { port: number }).port}`;
    g = await startTestGateway({
      networks: {
        mainnet: { chainId: 1 },
        testnet: { chainId: 11155111, aliases: ['devnet'] },
        slownet: { chainId: 5, upstream: slowUrl },
        deadnet: { chainId: 6, upstream: 'http://127.0.0.1:9' },
      },
      rpc: { maxBatchSize: 5, timeoutMs: 300 },
      server: { bodyLimit: 4096 },
    });
  });
  after(async () => {
    await g?.close();
    slow?.closeAllConnections();
    slow?.close();
  });

  const call = (method: string, params?: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

  test('a single request is answered with its id, type kept', async () => {
    for (const id of [1, 'abc', 0, 2.5, null, '']) {
      const r = await g.rpc(call('eth_chainId', [], id));
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { jsonrpc: '2.0', id, result: '0x1' });
    }
  });

  test('a numeric id beyond what a double holds is echoed digit for digit, alone and in a batch', async () => {
    const big = '12345678901234567890123';
    const long = '0.12345678901234567890123';
    const single = await g.rpc(`{"jsonrpc":"2.0","id":${big},"method":"eth_chainId"}`);
    assert.equal(single.status, 200);
    assert.equal(single.text, `{"jsonrpc":"2.0","id":${big},"result":"0x1"}`);
    // Errors echo it too, and items with ordinary ids around it keep theirs.
    const batch = await g.rpc(`[{"id":7,"method":"eth_chainId"},{"id":${long},"method":"eth_foo"},{"id":-${big},"id":${big},"method":"eth_chainId"}]`);
    assert.equal(batch.status, 200);
    assert.match(batch.text, new RegExp(`^\\[\\{"jsonrpc":"2.0","id":7,"result":"0x1"\\},\\{"jsonrpc":"2.0","id":${long.replace('.', '\\.')},"error":\\{"code":-32601,`));
    assert.ok(batch.text.endsWith(`{"jsonrpc":"2.0","id":${big},"result":"0x1"}]`), batch.text);
  });

  test('jsonrpc absent means 2.0; params absent means []; unknown members are ignored', async () => {
    const r = await g.rpc({ id: 7, method: 'eth_blockNumber', extra: { x: 1 } });
    assert.equal(r.status, 200);
    assert.equal(r.body.id, 7);
    assert.match(r.body.result, /^0x[0-9a-f]+$/);
  });

  test('jsonrpc other than "2.0" is -32600 with HTTP 400 and the id echoed', async () => {
    const r = await g.rpc({ jsonrpc: '1.0', id: 3, method: 'eth_chainId' });
    assert.equal(r.status, 400);
    assert.equal(r.body.id, 3);
    assert.equal(r.body.error.code, -32600);
    assert.match(r.body.error.message, /^Invalid Request/);
  });

  test('a request object without a method, or not an object, is -32600 with id null when no id can be read', async () => {
    let r = await g.rpc({ jsonrpc: '2.0', id: 4 });
    assert.deepEqual([r.status, r.body.id, r.body.error.code], [400, 4, -32600]);
    r = await g.rpc('"hello"');
    assert.deepEqual([r.status, r.body.id, r.body.error.code], [400, null, -32600]);
    r = await g.rpc({ jsonrpc: '2.0', id: { a: 1 }, method: 'eth_chainId' });
    assert.deepEqual([r.status, r.body.id, r.body.error.code], [400, null, -32600]);
  });

  test('params that are an object or a scalar are -32602 with HTTP 200', async () => {
    for (const params of [{ a: 1 }, 'x', 5]) {
      const r = await g.rpc(call('eth_getBalance', params, 9));
      assert.equal(r.status, 200);
      assert.equal(r.body.id, 9);
      assert.equal(r.body.error.code, -32602);
      assert.match(r.body.error.message, /^Invalid params/);
    }
  });

  test('invalid params name the parameter and what was expected', async () => {
    const r = await g.rpc(call('eth_getBalance', ['0x1234', 'latest']));
    assert.equal(r.status, 200);
    assert.equal(r.body.error.code, -32602);
    assert.equal(r.body.error.data.param, 'Address');
    assert.equal(r.body.error.data.index, 0);
    assert.equal(r.body.error.data.expected, 'hex encoded address');
    const missing = await g.rpc(call('eth_getBalance', []));
    assert.equal(missing.body.error.code, -32602);
    assert.match(missing.body.error.message, /missing value for required argument 0/);
    const extra = await g.rpc(call('eth_blockNumber', [1]));
    assert.match(extra.body.error.message, /too many arguments/);
  });

  test('a body that is not JSON is -32700 with HTTP 400', async () => {
    const r = await g.rpc('{"jsonrpc":"2.0",');
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the JSON ends early, at line 1 (a bracket, brace or quote left open)', data: { reason: 'parse_error', detail: 'the JSON ends early, at line 1 (a bracket, brace or quote left open)' } } });
    const wrong = await g.rpc('{"jsonrpc":"2.0",\n "id" 1}');
    assert.equal(wrong.body.error.message, 'Parse error: not valid JSON at line 2, column 7', 'where the body stops being JSON, as an editor counts');
  });

  test('an empty body is a parse error', async () => {
    const r = await g.rpc('');
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, -32700);
  });

  test('a notification is executed and gets 204 with no body', async () => {
    const r = await g.rpc({ jsonrpc: '2.0', method: 'eth_chainId' });
    assert.equal(r.status, 204);
    assert.equal(r.text, '');
  });

  test('a batch keeps request order, answers each item, and skips notifications', async () => {
    const r = await g.rpc([
      call('eth_chainId', [], 'a'),
      { jsonrpc: '2.0', method: 'eth_blockNumber' },
      call('getBalance', [], 2),
      call('eth_getBalance', [{}], 3),
      { jsonrpc: '2.0', id: 4 },
    ]);
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 4);
    assert.deepEqual(r.body.map((x: any) => x.id), ['a', 2, 3, 4]);
    assert.equal(r.body[0].result, '0x1');
    assert.equal(r.body[1].error.code, -32601);
    assert.equal(r.body[2].error.code, -32602);
    assert.equal(r.body[3].error.code, -32600);
  });

  test('a batch of only notifications gets 204', async () => {
    const r = await g.rpc([{ jsonrpc: '2.0', method: 'eth_chainId' }, { jsonrpc: '2.0', method: 'eth_blockNumber' }]);
    assert.equal(r.status, 204);
    assert.equal(r.text, '');
  });

  test('an empty batch is one -32600 error "empty batch" with HTTP 400', async () => {
    const r = await g.rpc([]);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: empty batch', data: { reason: 'invalid_request', detail: 'empty batch' } } });
  });

  test('a batch over the configured limit is one -32600 error with HTTP 400', async () => {
    const r = await g.rpc(Array.from({ length: 6 }, (_, i) => call('eth_chainId', [], i)));
    assert.equal(r.status, 400);
    assert.equal(r.body.id, null);
    assert.equal(r.body.error.code, -32600);
    assert.equal(r.body.error.message, 'Invalid Request: batch of 6 requests exceeds the limit of 5');
  });

  test('a method outside the allowed list is -32601 with HTTP 200', async () => {
    for (const m of ['getBalance', 'eth_foo', 'anvil_setBalance', 'evm_mine']) {
      const r = await g.rpc(call(m, []));
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.error, { code: -32601, message: `the method ${m} does not exist/is not available`, data: { reason: 'method_not_found', method: m } });
    }
  });

  test('an unknown method is -32601 whatever its params look like (the JSON-RPC 2.0 spec\'s batch example)', async () => {
    const r = await g.rpc([
      { jsonrpc: '2.0', method: 'foo.get', params: { name: 'myself' }, id: '5' },
      { jsonrpc: '2.0', method: 'eth_foo', params: 7, id: 6 },
      { jsonrpc: '2.0', method: 'eth_getBalance', params: { address: '0x00' }, id: 7 },
    ]);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.map((x: any) => [x.id, x.error.code]), [['5', -32601], [6, -32601], [7, -32602]]);
    assert.equal(r.body[0].error.message, 'the method foo.get does not exist/is not available');
  });

  test('a missing or unknown key is 401 -32010, and the key is never echoed', async () => {
    const bad = 'ngk_' + 'A'.repeat(43);
    for (const path of ['/v1/mainnet', '/v1/mainnet/', `/v1/mainnet/${bad}`, '/v1/mainnet/not-a-key']) {
      const r = await g.rpc(call('eth_chainId', [], 5), { path });
      assert.equal(r.status, 401, path);
      assert.equal(r.body.id, null, 'refused before the body is read: its id is unknown (JSON-RPC 2.0)');
      assert.equal(r.body.error.code, -32010);
      assert.equal(r.body.error.message, path.split('/')[3] ? 'invalid API key' : 'no API key in the URL: call /v1/{network}/{your key} (the dashboard shows the complete URL when a key is made)', 'a missing key is not called invalid');
      assert.ok(!r.text.includes(bad));
    }
  });

  test('an unknown network is 404 -32012', async () => {
    const r = await g.rpc(call('eth_chainId'), { network: 'goerli' });
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, -32012);
    assert.match(r.body.error.message, /^unknown network goerli; this gateway serves mainnet(, |$)/, 'with the networks it serves');
  });

  test('the unversioned path and the devnet alias reach the same networks', async () => {
    let r = await g.rpc(call('eth_chainId'), { path: `/mainnet/${g.key}` });
    assert.equal(r.body.result, '0x1');
    r = await g.rpc(call('eth_chainId'), { network: 'devnet' });
    assert.equal(r.body.result, '0xaa36a7');
    r = await g.rpc(call('eth_chainId'), { path: `/devnet/${g.key}` });
    assert.equal(r.body.result, '0xaa36a7');
  });

  test('a content type other than JSON is 415; a charset parameter is fine', async () => {
    let r = await g.rpc(call('eth_chainId'), { headers: { 'content-type': 'text/plain' } });
    assert.equal(r.status, 415);
    assert.equal(r.body.error.code, -32600);
    r = await g.rpc(call('eth_chainId'), { headers: { 'content-type': 'application/json; charset=utf-8' } });
    assert.equal(r.body.result, '0x1');
  });

  test('a body over the limit is 413', async () => {
    const r = await g.rpc(call('web3_sha3', ['0x' + 'ab'.repeat(4096)]));
    assert.equal(r.status, 413);
    assert.equal(r.body.error.code, -32600);
    assert.equal(r.body.error.message, 'request body exceeds 4096 bytes');
  });

  test('a body sent after its headers and in pieces, and requests pipelined on one connection, are each read whole', async () => {
    const u = new URL(g.url);
    const sock = connect(Number(u.port), '127.0.0.1');
    await once(sock, 'connect');
    let got = '';
    sock.setEncoding('utf8').on('data', (d: string) => { got += d; });
    const answered = async (n: number) => {
      while ((got.match(/"jsonrpc":"2.0"/g) ?? []).length < n) await once(sock, 'data');
    };
    const req = (body: string) => `POST /v1/mainnet/${g.key} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const one = JSON.stringify(call('eth_chainId', [], 41));
    // The headers alone, then the body in two writes, each after the gateway has had the last.
    sock.write(req(one));
    await new Promise((r) => setTimeout(r, 50));
    sock.write(one.slice(0, 10));
    await new Promise((r) => setTimeout(r, 50));
    sock.write(one.slice(10));
    await answered(1);
    assert.match(got, /"id":41,"result":"0x1"/);
    // Two requests in one write: each answered with its own id, in order.
    const a = JSON.stringify(call('eth_chainId', [], 42));
    const b = JSON.stringify(call('web3_sha3', ['0x68656c6c6f'], 43));
    sock.write(req(a) + a + req(b) + b);
    await answered(3);
    assert.match(got, /"id":42,"result":"0x1"[^]*"id":43,"result":"0x1c8aff950685c2ed4bc3174f3472287b56d9517b9c948127319a09a7a36deac8"/);
    sock.destroy();
  });

  test('GET on the endpoint is 405 with Allow: POST', async () => {
    const res = await fetch(`${g.url}/v1/mainnet/${g.key}`);
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST');
    assert.equal((await res.json()).error.code, -32600);
  });

  test('OPTIONS is a CORS preflight; responses allow any origin', async () => {
    const res = await fetch(`${g.url}/v1/mainnet/${g.key}`, { method: 'OPTIONS', headers: { origin: 'https://dapp.example', 'access-control-request-method': 'POST' } });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /POST/);
    const r = await g.rpc(call('eth_chainId'));
    assert.equal(r.headers.get('access-control-allow-origin'), '*');
    // A dapp in a browser can read what tells it to slow down, and whether the cache answered.
    const exposed = (r.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    for (const h of ['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-request-id', 'x-cache']) {
      assert.ok(exposed.includes(h), `${h} is exposed to scripts: ${exposed}`);
    }
  });

  test("every response carries X-Request-Id, the caller's own when it sent one", async () => {
    const ok = await g.rpc(call('eth_chainId'));
    assert.match(ok.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const err = await g.rpc('nope');
    assert.ok(err.headers.get('x-request-id'));
    const mine = await g.rpc(call('eth_chainId'), { headers: { 'x-request-id': 'trace-42' } });
    assert.equal(mine.headers.get('x-request-id'), 'trace-42');
    const res404 = await fetch(`${g.url}/nothing/here/at/all`);
    assert.equal(res404.status, 404);
    assert.ok(res404.headers.get('x-request-id'));
  });

  test('a node that does not answer in time is 504 -32015', async () => {
    const r = await g.rpc(call('eth_blockNumber', [], 11), { network: 'slownet' });
    assert.equal(r.status, 504);
    assert.equal(r.body.id, 11);
    assert.equal(r.body.error.code, -32015);
    assert.equal(r.body.error.message, 'request timed out');
  });

  test('a node that cannot be reached is 503 -32002, and inside a batch the item fails alone', async () => {
    const r = await g.rpc(call('eth_blockNumber', [], 12), { network: 'deadnet' });
    assert.equal(r.status, 503);
    assert.equal(r.body.error.code, -32002);
    // Before a node serves, its chain id is read; one that never answered it is said so.
    assert.equal(r.body.error.message, 'resource unavailable: the node has not answered its chain id');
    const b = await g.rpc([call('eth_blockNumber', [], 1), call('getBalance', [], 2)], { network: 'deadnet' });
    assert.equal(b.status, 200);
    assert.equal(b.body[0].error.code, -32002);
    assert.equal(b.body[1].error.code, -32601);
  });

  test('an upstream JSON-RPC error passes through unchanged with HTTP 200', async () => {
    // anvil's own answer to a malformed raw transaction.
    const r = await g.rpc(call('eth_sendRawTransaction', ['0x01']));
    assert.equal(r.status, 200);
    assert.equal(typeof r.body.error.code, 'number');
    assert.equal(r.body.error.data?.reason, undefined);
  });

  test('/healthz and /readyz', async () => {
    const h = await fetch(`${g.url}/healthz`);
    assert.equal(h.status, 200);
    const ready = await fetch(`${g.url}/readyz`);
    // deadnet and slownet are down, so the gateway says it is not ready and why.
    assert.equal(ready.status, 503);
    const body = await ready.json();
    assert.equal(body.checks['network:mainnet'], 'ok');
    assert.match(body.checks['network:deadnet'], /^down/);
    // The embedded chain's light reads go over its anvil's WebSocket (upstream/ws-lane.ts); nodes by URL without an
    // upstreams[].ws have none. The socket opens once anvil answers: asked until /readyz says so, for at most 10 s.
    const socketOf = (b: { upstreams: { network: string; socket?: string }[] }, network: string) => b.upstreams.find((u) => u.network === network)?.socket;
    let seen = body;
    for (const until = Date.now() + 10_000; socketOf(seen, 'mainnet') !== 'open' && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 100));
      seen = await (await fetch(`${g.url}/readyz`)).json();
    }
    assert.equal(socketOf(seen, 'mainnet'), 'open', JSON.stringify(seen.upstreams));
    assert.equal(socketOf(seen, 'slownet'), undefined, 'a node by URL without a ws address has no socket');
    const before = await g.call('eth_blockNumber');
    assert.match(before, /^0x[0-9a-f]+$/, 'and reads answer with the socket open');
  });
});
