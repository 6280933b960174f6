/**
 * Lookups by hash with a late node (docs/architecture.md, "Lookups by hash"): a network of two primaries, a replica
 * one block behind an anvil (test/helpers/lagging-node.ts) and the anvil itself at the head, whose head the checks
 * read one block late (so the gateway's checks never show it ahead of the late node). Once a caller has seen a
 * receipt, a receipt, transaction or block looked up by hash is never `null` or pending again: the late node's
 * answer is asked of the node whose answers showed that block.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { sendAndReceipt } from '../helpers/send-and-receipt.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startLaggingNode, type LaggingNode } from '../helpers/lagging-node.ts';
import { createServer, type Server } from 'node:http';

const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const ROUNDS = 200;

describe('a late node in front of the node at the head: lookups by hash', { timeout: 90_000 }, () => {
  let anvil: TestAnvil;
  let late: LaggingNode;
  let g: TestGateway;
  let slowHead: Server;
  before(async () => {
    anvil = await startAnvil();
    late = await startLaggingNode(anvil.url, 1);
    slowHead = await reportsHeadLate(anvil.url);
    const at = `http://127.0.0.1:${(slowHead.address() as { port: number }).port}`;
    g = await startTestGateway({
      networks: { late: { chainId: 1, upstreams: [{ url: late.url }, { url: at }] } },
      upstreams: { checkIntervalMs: 20 },
      cache: { enabled: false }, // every read reaches a node
    });
  });
  after(async () => {
    await g?.close();
    await late?.close();
    slowHead?.closeAllConnections();
    slowHead?.close();
    anvil?.stop();
  });

  const call = async (method: string, params: unknown[]) => {
    const r = await g.rpc({ jsonrpc: '2.0', id: 1, method, params }, { network: 'late' });
    return r.status === 200 && r.body && !r.body.error ? { result: r.body.result } : { error: `${r.status} ${JSON.stringify(r.body?.error)}` };
  };

  test(`${ROUNDS} rounds of send, receipt, then receipt, transaction and block by hash: 0 read-your-writes breaks`, async () => {
    await eventually(() => g.gw.networks.get('late')!.chain.status().every((s) => s.state === 'up'), 10_000, 'both nodes up');
    const breaks: string[] = [];
    for (let nonce = 0; nonce < ROUNDS; nonce++) {
      const { hash, receipt } = await sendAndReceipt(call, account, nonce);
      const [again, tx, block] = await Promise.all([
        call('eth_getTransactionReceipt', [hash]),
        call('eth_getTransactionByHash', [hash]),
        call('eth_getBlockByHash', [receipt.blockHash, false]),
      ]);
      if (!(again.result as any)?.blockHash) breaks.push(`round ${nonce}: receipt again ${JSON.stringify(again)}`);
      if ((tx.result as any)?.blockNumber !== receipt.blockNumber) breaks.push(`round ${nonce}: transaction ${JSON.stringify(tx).slice(0, 200)}`);
      if ((block.result as any)?.hash !== receipt.blockHash) breaks.push(`round ${nonce}: block by hash ${JSON.stringify(block).slice(0, 200)}`);
    }
    const asked = ['eth_getTransactionReceipt', 'eth_getTransactionByHash', 'eth_getBlockByHash'].map((m) => `${m} ${late.calls.get(m) ?? 0}`);
    console.log(`late node: ${ROUNDS} rounds, ${breaks.length} read-your-writes breaks; the late node was asked ${asked.join(', ')}`);
    assert.deepEqual(breaks.slice(0, 5), [], `${breaks.length} breaks`);
    assert.ok((late.calls.get('eth_getTransactionByHash') ?? 0) >= ROUNDS / 4, 'the late node took the lookups first (the test tests something)');
  });
});

/**
 * The anvil, with its head read one block late: `eth_blockNumber` and the latest block are its block before the
 * newest, while every lookup is the anvil's own. So the gateway's checks never show it ahead of the late node, as a
 * check may read a node a moment before it counts its newest block.
 */
async function reportsHeadLate(anvilUrl: string): Promise<Server> {
  const ask = async (body: unknown) => (await fetch(anvilUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
  const one = async (q: { id: unknown; method: string; params?: unknown[] }) => {
    const latest = q.method === 'eth_blockNumber' || (q.method === 'eth_getBlockByNumber' && q.params?.[0] === 'latest');
    if (!latest) return ask(q);
    const head = Math.max(0, Number((await ask({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] })).result) - 1);
    if (q.method === 'eth_blockNumber') return { jsonrpc: '2.0', id: q.id, result: `0x${head.toString(16)}` };
    return { ...(await ask({ ...q, params: [`0x${head.toString(16)}`, ...(q.params ?? []).slice(1)] })), id: q.id };
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        const out = Array.isArray(body) ? await Promise.all(body.map(one)) : await one(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      } catch {
        res.writeHead(502).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}
