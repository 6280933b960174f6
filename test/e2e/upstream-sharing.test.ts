/**
 * Light reads of many callers share node requests (docs/methods.md "Upstream batching"): requests that the
 * gateway reads in one turn of its event loop send their balances, nonces and block numbers to the node as one
 * JSON-RPC batch, and each caller still gets its own answer. Code-executing calls (eth_call) of different callers
 * never share one. Through the wire: 20 requests pipelined on one connection (so that the gateway reads them in
 * one turn, whatever the machine's load) to a gateway in front of a real anvil, behind a loopback relay that
 * records what each of its HTTP requests carried.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { startFakeNode, type FakeNode } from '../helpers/fake-node.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** The first anvil development account holds 10,000 ETH; made-up addresses hold nothing. */
const RICH = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const address = (i: number) => (i % 4 === 0 ? RICH : `0x${(0xabc000 + i).toString(16).padStart(40, '0')}`);
const N = 20;

/** `bodies` as HTTP/1.1 requests written at once on one connection; the bodies of the answers, in order. */
function pipelined(url: string, path: string, bodies: string[]): Promise<string[]> {
  const { hostname, port } = new URL(url);
  const wire = bodies.map((b) => `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`).join('');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let buf = Buffer.alloc(0);
    const answers: string[] = [];
    socket.setTimeout(20_000, () => socket.destroy(new Error(`only ${answers.length} of ${bodies.length} answers within 20 s`)));
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1]);
        if (!/^HTTP\/1\.1 200 /.test(head) || !Number.isFinite(length)) return socket.destroy(new Error(`unexpected answer: ${head}`));
        if (buf.length < end + 4 + length) return;
        answers.push(buf.subarray(end + 4, end + 4 + length).toString('utf8'));
        buf = buf.subarray(end + 4 + length);
        if (answers.length === bodies.length) { socket.end(); return resolve(answers); }
      }
    });
    socket.once('error', reject);
    socket.write(wire);
  });
}

describe('light reads of many callers share node requests', { timeout: 60_000 }, () => {
  let anvil: TestAnvil;
  let relay: FakeNode;
  let g: TestGateway;

  before(async () => {
    anvil = await startAnvil();
    relay = await startFakeNode(anvil.url);
    // No cache: every call goes to the node.
    g = await startTestGateway({ cache: { enabled: false }, networks: {
      mainnet: { chainId: 1, upstream: relay.origin },
      // The same node, for an operator whose provider charges or refuses batches.
      alone: { chainId: 1, upstreams: [{ url: relay.origin, shareReads: false }] },
    } });
  });
  after(async () => {
    await g?.close();
    await relay?.close();
    anvil?.stop();
  });

  const requestsWith = (method: string, from: number) => relay.requests.slice(from).filter((r) => r.includes(method));

  test('20 requests read in one turn: each caller gets its own balance, and the node gets far fewer than 20 requests', async () => {
    const from = relay.requests.length;
    const bodies = Array.from({ length: N }, (_, i) => JSON.stringify({ jsonrpc: '2.0', id: 100 + i, method: 'eth_getBalance', params: [address(i), 'latest'] }));
    const answers = (await pipelined(g.url, `/v1/mainnet/${g.key}`, bodies)).map((t) => JSON.parse(t));
    for (let i = 0; i < N; i++) {
      assert.equal(answers[i].id, 100 + i, 'answers in order, each with its own id');
      assert.equal(answers[i].result, i % 4 === 0 ? '0x21e19e0c9bab2400000' : '0x0', `caller ${i} got its own address's balance`);
    }
    const sent = requestsWith('eth_getBalance', from);
    assert.equal(sent.flat().filter((m) => m === 'eth_getBalance').length, N, 'each call reached the node once');
    assert.ok(sent.length <= N / 4, `the node got ${sent.length} requests for ${N} callers' balances`);
  });

  test('with shareReads off, each request is its own node request', async () => {
    const from = relay.requests.length;
    const bodies = Array.from({ length: 8 }, (_, i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [address(i), 'latest'] }));
    const answers = (await pipelined(g.url, `/v1/alone/${g.key}`, bodies)).map((t) => JSON.parse(t));
    assert.equal(answers[0].result, '0x21e19e0c9bab2400000');
    const sent = requestsWith('eth_getBalance', from);
    assert.equal(sent.length, 8);
    assert.ok(sent.every((r) => r.length === 1));
  });

  test('blocks are shared without their transactions, never with them (megabytes each on a real chain)', async () => {
    const blocks = (full: boolean) => Array.from({ length: 6 }, (_, i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_getBlockByNumber', params: ['0x0', full] }));
    let from = relay.requests.length;
    const light = (await pipelined(g.url, `/v1/mainnet/${g.key}`, blocks(false))).map((t) => JSON.parse(t));
    assert.ok(light.every((a) => a.result.number === '0x0' && typeof a.result.transactions[0] !== 'object'));
    assert.ok(requestsWith('eth_getBlockByNumber', from).length < 6, 'headers with hashes: shared');
    from = relay.requests.length;
    const full = (await pipelined(g.url, `/v1/mainnet/${g.key}`, blocks(true))).map((t) => JSON.parse(t));
    assert.ok(full.every((a) => a.result.number === '0x0'));
    const sent = requestsWith('eth_getBlockByNumber', from);
    assert.equal(sent.length, 6);
    assert.ok(sent.every((r) => r.length === 1), 'each full block alone in its node request');
  });

  test("eth_call of different callers never shares a node request: one caller's slow call holds nobody else's answer", async () => {
    const from = relay.requests.length;
    const bodies = Array.from({ length: 6 }, (_, i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_call', params: [{ to: '0x0000000000000000000000000000000000000004', data: `0x0${i}` }, 'latest'] }));
    const answers = (await pipelined(g.url, `/v1/mainnet/${g.key}`, bodies)).map((t) => JSON.parse(t));
    assert.deepEqual(answers.map((a) => a.result), [0, 1, 2, 3, 4, 5].map((i) => `0x0${i}`), 'the identity precompile echoes each caller its own data');
    const sent = requestsWith('eth_call', from);
    assert.equal(sent.length, 6);
    assert.ok(sent.every((r) => r.length === 1), 'each eth_call alone in its node request');
  });
});
