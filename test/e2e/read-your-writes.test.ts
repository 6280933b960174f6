/**
 * Read-your-writes through the wire (docs/decisions.md §9), with the response cache on: once a caller has seen a
 * receipt in block N, nothing the gateway answers afterwards is older: not `eth_blockNumber`, not the sender's
 * transaction count, not a filter poll (which reports that receipt's log and block). Each round asks the cacheable
 * questions before the transaction and again while it is being mined, so that the cache holds answers of the
 * moment before its block when the receipt arrives.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encodeFunctionData } from 'viem';
import { compileCounter, counterInitCode } from '../helpers/counter.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const ROUNDS = 200;

describe('read-your-writes with the response cache on', { timeout: 300_000 }, () => {
  let g: TestGateway;
  let from: string;

  const ok = async <T = any>(method: string, params: unknown[] = []): Promise<T> => {
    const r = await g.rpc({ jsonrpc: '2.0', id: 1, method, params });
    assert.equal(r.body?.error, undefined, `${method}: ${JSON.stringify(r.body?.error)}`);
    return r.body.result as T;
  };
  /** As a client waits for a receipt: ask until the node has it. */
  const receiptOf = async (hash: string) => {
    const end = Date.now() + 10_000;
    for (;;) {
      const receipt = await ok<any>('eth_getTransactionReceipt', [hash]);
      if (receipt) return receipt;
      assert.ok(Date.now() < end, `no receipt for ${hash} within 10 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  before(async () => {
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } } });
    assert.equal(g.gw.config.cache.enabled, true, 'the cache is on, as by default');
    [from] = await ok<string[]>('eth_accounts');
  });
  after(() => g?.close());

  test(`${ROUNDS} rounds of send, receipt, then block number, nonce and filter polls: never older than the receipt`, async () => {
    const counter = (await receiptOf(await ok('eth_sendTransaction', [{ from, data: counterInitCode(0) }]))).contractAddress;
    const increment = encodeFunctionData({ abi: compileCounter().abi, functionName: 'increment' });
    const logFilter = await ok<string>('eth_newFilter', [{ address: counter }]);
    const blockFilter = await ok<string>('eth_newBlockFilter');
    let stale = 0;
    for (let i = 0; i < ROUNDS; i++) {
      // The cache now holds the head's answers of before this round's transaction.
      const nonce = Number(await ok('eth_getTransactionCount', [from, 'latest']));
      await ok('eth_blockNumber');
      const hash = await ok<string>('eth_sendTransaction', [{ from, to: counter, data: increment }]);
      // While waiting, as ethers' tx.wait() does: the head's answers of the moment before the block, cacheable.
      await Promise.all([ok('eth_blockNumber'), ok('eth_getTransactionCount', [from, 'latest'])]);
      const receipt = await receiptOf(hash);
      const n = Number(receipt.blockNumber);
      const [blockNumber, count, logs, blocks] = await Promise.all([
        ok('eth_blockNumber'),
        ok('eth_getTransactionCount', [from, 'latest']),
        ok<any[]>('eth_getFilterChanges', [logFilter]),
        ok<string[]>('eth_getFilterChanges', [blockFilter]),
      ]);
      const problems = [];
      if (Number(blockNumber) < n) problems.push(`eth_blockNumber ${Number(blockNumber)} < receipt block ${n}`);
      if (Number(count) < nonce + 1) problems.push(`eth_getTransactionCount ${Number(count)} <= nonce ${nonce}`);
      if (!logs.some((l) => l.transactionHash === hash)) problems.push(`the log filter did not report ${hash}`);
      if (!blocks.includes(receipt.blockHash)) problems.push(`the block filter did not report block ${n}`);
      if (problems.length) {
        stale++;
        assert.fail(`round ${i}: ${problems.join('; ')}`);
      }
    }
    console.log(`read-your-writes: ${ROUNDS} rounds, ${stale} stale answers`);
  });
});
