/**
 * A node's answer is checked before it is passed on: an answer carrying another call's id, or a result
 * nested 200,000 deep, is a bad answer (503 -32002, like one that is not JSON), never a caller's result. Through
 * the wire, against a small fake node on loopback.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const HASH = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe("the node's answer: its id and its nesting are checked", { timeout: 60_000 }, () => {
  let g: TestGateway;
  let node: Server;

  before(async () => {
    node = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const msg = JSON.parse(body);
        const answer = (m: { id: number; method: string; params: unknown[] }) => {
          const which = Number(BigInt(String(m.params?.[0] ?? '0x0')));
          if (m.method === 'eth_getTransactionByHash' && which === 1) return `{"jsonrpc":"2.0","id":${m.id + 1},"result":{"hash":"${HASH(1)}"}}`;
          if (m.method === 'eth_getBlockByHash' && which === 2) return `{"jsonrpc":"2.0","id":${m.id},"result":${nested(200_000)}}`;
          if (m.method === 'eth_getBlockByHash' && which === 3) return `{"jsonrpc":"2.0","id":${m.id},"result":${nested(100)}}`;
          if (m.method === 'eth_getTransactionByHash') return `{"jsonrpc":"2.0","id":${m.id},"result":{"hash":"${HASH(which)}"}}`;
          return `{"jsonrpc":"2.0","id":${m.id},"result":"0x7"}`;
        };
        res.setHeader('content-type', 'application/json');
        res.end(Array.isArray(msg) ? `[${msg.map(answer).join(',')}]` : answer(msg));
      });
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    const upstream = `http://127.0.0.1:${(node.address() as { port: number }).port}`;
    // `deep` answers blocks with bare arrays: its answers are to be read (nesting), not checked as blocks (verify).
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 }, mixed: { chainId: 7, upstream }, deep: { chainId: 7, upstream, verify: 'off' } } });
  });
  after(async () => {
    await g?.close();
    node?.close();
  });

  const call = (network: string, method: string, params: unknown[], id = 1) => g.rpc({ jsonrpc: '2.0', id, method, params }, { network });

  test("an answer with another call's id is a bad answer (503 -32002), never the caller's result", async () => {
    const good = await call('mixed', 'eth_getTransactionByHash', [HASH(9)]);
    assert.equal(good.status, 200);
    assert.equal(good.body.result.hash, HASH(9), 'the node\'s right answers pass');
    const wrong = await call('mixed', 'eth_getTransactionByHash', [HASH(1)]);
    console.log(`wrong id: HTTP ${wrong.status}, ${wrong.text.slice(0, 160)}`);
    assert.equal(wrong.status, 503);
    assert.equal(wrong.body.error.code, -32002);
    assert.equal(wrong.body.result, undefined);
    // Inside a batch (sent to the node as one batch): the mixed-up item fails alone.
    const batch = await g.rpc([1, 10].map((n, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_getTransactionByHash', params: [HASH(n)] })), { network: 'mixed' });
    assert.equal(batch.status, 200);
    assert.equal(batch.body[0].error.code, -32002);
    assert.equal(batch.body[1].result.hash, HASH(10));
  });

  test('a result nested 200,000 deep is a bad answer (503 -32002); 100 deep passes', async () => {
    const ok = await call('deep', 'eth_getBlockByHash', [HASH(3), false]);
    assert.equal(ok.status, 200);
    assert.equal(ok.text.length, 2 * 100 + '{"jsonrpc":"2.0","id":1,"result":}'.length);
    const deep = await call('deep', 'eth_getBlockByHash', [HASH(2), false]);
    console.log(`200,000 deep: HTTP ${deep.status}, ${deep.text.length} bytes: ${deep.text.slice(0, 160)}`);
    assert.equal(deep.status, 503);
    assert.equal(deep.body.error.code, -32002);
    assert.match(deep.body.error.data.detail, /nested deeper than/);
    // The gateway still answers the next call (nothing recursed on its stack).
    assert.equal((await call('deep', 'eth_getBlockByHash', [HASH(3), false])).status, 200);
  });
});
