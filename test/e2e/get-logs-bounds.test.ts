import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encodeFunctionData } from 'viem';
import { compileCounter, counterInitCode } from '../helpers/counter.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** docs/decisions.md §7: eth_getLogs spans at most N blocks and answers at most M logs, or -32005 with a range that fits. */
describe('eth_getLogs bounds', () => {
  let g: TestGateway;
  let counter: string;
  /** Blocks holding one Incremented log each, in order. */
  const logBlocks: number[] = [];

  const tx = async (params: Record<string, string>) => {
    const [from] = await g.call<string[]>('eth_accounts');
    const hash = await g.call<string>('eth_sendTransaction', [{ from, ...params }]);
    // anvil may answer just before it mines: wait for the receipt, as a client does.
    for (const end = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 50))) {
      const receipt = await g.call<{ blockNumber: string; contractAddress: string | null } | null>('eth_getTransactionReceipt', [hash]);
      if (receipt) return receipt;
      assert.ok(Date.now() < end, `no receipt for ${hash} within 10 s`);
    }
  };
  const getLogs = (filter: Record<string, unknown>) => g.rpc({ jsonrpc: '2.0', id: 9, method: 'eth_getLogs', params: [filter] });
  const hex = (n: number) => '0x' + n.toString(16);

  before(async () => {
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } }, limits: { getLogs: { maxBlockRange: 5, maxResults: 3 } } });
    counter = (await tx({ data: counterInitCode(0) })).contractAddress!;
    const increment = encodeFunctionData({ abi: compileCounter().abi, functionName: 'increment' });
    for (let i = 0; i < 4; i++) logBlocks.push(Number((await tx({ to: counter, data: increment })).blockNumber));
    // Blocks without logs after them, so that the head is well past the bound.
    for (let i = 0; i < 6; i++) await tx({ to: '0x000000000000000000000000000000000000dEaD', value: '0x1' });
  });
  after(() => g?.close());

  test('a range over the bound is -32005 with the first range that fits, in Infura wording, with HTTP 200', async () => {
    const r = await getLogs({ fromBlock: '0x1', toBlock: '0x9' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      jsonrpc: '2.0', id: 9,
      error: {
        code: -32005,
        message: 'query returned more than 3 results. Try with this block range [0x1, 0x5].',
        data: { reason: 'logs_too_many', limit: 3, from: '0x1', to: '0x5' },
      },
    });
  });

  test('tags count too: earliest to latest (and no toBlock at all) is over the bound', async () => {
    for (const filter of [{ fromBlock: 'earliest', toBlock: 'latest' }, { fromBlock: '0x0' }]) {
      const r = await getLogs(filter);
      assert.equal(r.body.error?.code, -32005, JSON.stringify(filter));
      assert.deepEqual([r.body.error.data.from, r.body.error.data.to], ['0x0', '0x4']);
    }
  });

  test('more logs than the bound in a range within it: the range suggested ends before the first log over it', async () => {
    const from = logBlocks[0];
    assert.ok(logBlocks[3] - from < 5, `the four logs lie within five blocks: ${logBlocks}`);
    const r = await getLogs({ fromBlock: hex(from), toBlock: hex(from + 4), address: counter });
    assert.equal(r.body.error?.code, -32005);
    assert.equal(r.body.error.message, `query returned more than 3 results. Try with this block range [${hex(from)}, ${hex(logBlocks[3] - 1)}].`);
    // The suggestion works.
    const fits = await getLogs({ fromBlock: hex(from), toBlock: r.body.error.data.to, address: counter });
    assert.equal(fits.body.result.length, 3);
  });

  test('within both bounds, and by block hash, the node answers as usual', async () => {
    const r = await getLogs({ fromBlock: hex(logBlocks[0]), toBlock: hex(logBlocks[2]), address: counter });
    assert.equal(r.body.result.length, 3);
    assert.equal(r.body.result[0].address.toLowerCase(), counter.toLowerCase());
    const block = await g.call<{ hash: string }>('eth_getBlockByNumber', [hex(logBlocks[1]), false]);
    const byHash = await getLogs({ blockHash: block.hash });
    assert.equal(byHash.body.result.length, 1);
  });
});
