/**
 * eth_getBlockReceipts: one spec file, enabled by default on embedded chains. Through the gateway on an
 * embedded chain that mines a block a second, a block holding several transactions sent in one batch: its receipts
 * equal the receipts asked one by one (by number, by bare hash, by EIP-1898 hash), the second call is a cache HIT,
 * bad params are -32602, and the raw call viem (and ponder's receipts mode) makes is answered, never -32601.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPublicClient, http } from 'viem';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

type Receipt = { transactionHash: string; transactionIndex: string; blockNumber: string; blockHash: string; blockTimestamp?: unknown };

describe('eth_getBlockReceipts on an embedded chain', () => {
  let g: TestGateway;
  let block: { number: string; hash: string; transactions: string[] };

  const rpc = (method: string, params: unknown[]) => g.rpc({ jsonrpc: '2.0', id: 1, method, params });

  before(async () => {
    // Interval mining: transactions sent together share a block. No rpc.extraMethods: the embedded default applies.
    g = await startTestGateway({ embedded: { mining: 'interval', blockTimeSeconds: 1 }, upstreams: { checkIntervalMs: 50 } });
    const chain = g.gw.networks.get('mainnet')!.chain;
    const accounts: string[] = await g.call('eth_accounts');
    const start = Number(await g.call('eth_blockNumber'));
    // Three transfers and a creation from four senders, in one request: at most one block boundary falls among
    // them, so some block holds two or more.
    const txs = [
      ...[1, 2, 3].map((i) => ({ from: accounts[i], to: accounts[9], value: '0x' + i.toString(16) })),
      { from: accounts[4], data: '0x600a600c600039600a6000f3602a60005260206000f3' },
    ];
    const sent = await g.rpc(txs.map((tx, id) => ({ jsonrpc: '2.0', id, method: 'eth_sendTransaction', params: [tx] })));
    const hashes: string[] = sent.body.map((a: { result?: string; error?: unknown }) => {
      assert.equal(a.error, undefined, JSON.stringify(a.error));
      return a.result;
    });
    // Two blocks past the one the batch was sent at: every transaction of the batch is mined by then.
    await new Promise<void>((resolve) => {
      const seen = (n: number) => { if (n >= start + 2) { chain.off('head', seen); resolve(); } };
      chain.on('head', seen);
    });
    const blocks = new Map<string, string[]>();
    for (const h of hashes) {
      const r: Receipt = await g.call('eth_getTransactionReceipt', [h]);
      blocks.set(r.blockNumber, [...(blocks.get(r.blockNumber) ?? []), h]);
    }
    const [fullest] = [...blocks].sort((a, b) => b[1].length - a[1].length);
    block = await g.call('eth_getBlockByNumber', [fullest[0], false]);
    console.log(`# ${hashes.length} transactions in blocks ${[...blocks].map(([n, t]) => `${Number(n)} (${t.length})`).join(', ')}`);
  });
  after(async () => { await g?.close(); });

  test('the embedded network enables it by default (no rpc.extraMethods given): in the method table, answered', async () => {
    assert.equal(g.gw.config.rpc.extraMethods.mainnet, undefined);
    assert.ok(g.gw.networks.get('mainnet')!.methods.has('eth_getBlockReceipts'));
    const latest = await rpc('eth_getBlockReceipts', ['latest']);
    assert.equal(latest.body.error, undefined, JSON.stringify(latest.body.error));
    assert.ok(Array.isArray(latest.body.result));
  });

  test('a block of several transactions: the receipts equal the per-transaction receipts, in order; the second call is a HIT', async () => {
    assert.ok(block.transactions.length >= 2, `the block holds ${block.transactions.length} transactions`);
    const one: Receipt[] = [];
    for (const h of block.transactions) one.push(await g.call('eth_getTransactionReceipt', [h]));
    const first = await rpc('eth_getBlockReceipts', [block.number]);
    assert.equal(first.body.error, undefined, JSON.stringify(first.body.error));
    assert.deepEqual(first.body.result, one);
    // The adapter makes anvil's numeric blockTimestamp a QUANTITY, as in eth_getTransactionReceipt.
    assert.match(String((first.body.result as Receipt[])[0].blockTimestamp), /^0x[0-9a-f]+$/);
    assert.equal(first.headers.get('x-cache'), 'MISS');
    const second = await rpc('eth_getBlockReceipts', [block.number]);
    assert.equal(second.headers.get('x-cache'), 'HIT');
    assert.deepEqual(second.body.result, one);
    for (const params of [[block.hash], [{ blockHash: block.hash }], [{ blockNumber: block.number }]]) {
      const byHash = await rpc('eth_getBlockReceipts', params);
      assert.deepEqual(byHash.body.result, one, JSON.stringify(params));
      assert.equal((await rpc('eth_getBlockReceipts', params)).headers.get('x-cache'), 'HIT', JSON.stringify(params));
    }
    console.log(`# block ${Number(block.number)}: ${one.length} receipts equal; MISS then HIT`);
  });

  test('a block the node does not have is null, and a null by hash is not kept', async () => {
    const unknown = '0x' + 'ab'.repeat(32);
    const a = await rpc('eth_getBlockReceipts', [unknown]);
    assert.equal(a.body.result, null);
    assert.equal((await rpc('eth_getBlockReceipts', [unknown])).headers.get('x-cache'), 'MISS');
    assert.equal((await rpc('eth_getBlockReceipts', ['0xffffff'])).body.result, null);
  });

  test('bad params are -32602 Invalid params', async () => {
    for (const params of [[], [block.number, true], ['newest'], [{ blockHash: '0x12' }], [42]]) {
      const r = await rpc('eth_getBlockReceipts', params);
      assert.equal(r.status, 200);
      assert.equal(r.body.error?.code, -32602, `${JSON.stringify(params)}: ${JSON.stringify(r.body)}`);
    }
  });

  test("viem's raw eth_getBlockReceipts request, as ponder's receipts mode makes it (by block hash): answered, no -32601", async () => {
    const client = createPublicClient({ transport: http(`${g.url}/v1/mainnet/${g.key}`) });
    let notFound = 0;
    const asked = [block.hash, block.number, 'latest'];
    for (const p of asked) {
      try {
        const receipts = await client.request({ method: 'eth_getBlockReceipts', params: [p as `0x${string}`] });
        assert.ok(Array.isArray(receipts));
        if (p === block.hash) assert.deepEqual(receipts.map((r) => r.transactionHash), block.transactions);
      } catch (err) {
        if ((err as { code?: number }).code === -32601) notFound++;
        else throw err;
      }
    }
    assert.equal(notFound, 0);
    console.log(`# viem: ${asked.length} eth_getBlockReceipts requests, ${notFound} -32601`);
  });
});
