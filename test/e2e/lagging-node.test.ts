/**
 * A node kept 3 blocks behind: one network of two upstreams on the same chain, an anvil and a
 * replica of it that lags 3 blocks (test/helpers/lagging-node.ts: anvil cannot lag on the same chain). Reads go to
 * either. A client that writes and reads back what it wrote never sees it undone: 200 rounds of send → receipt →
 * lookups by hash, logs by block hash, nonce, block number, with 0 read-your-writes violations.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { sendAndReceipt } from '../helpers/send-and-receipt.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startLaggingNode, type LaggingNode } from '../helpers/lagging-node.ts';
import { startFakeNode, type FakeNode } from '../helpers/fake-node.ts';

const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const ROUNDS = 200;

describe('a node kept 3 blocks behind another on the same chain', { timeout: 180_000 }, () => {
  let anvil: TestAnvil;
  let lagging: LaggingNode;
  /** The node ahead as the gateway reaches it: a loopback relay to the anvil, closed to leave only the lagging node. */
  let ahead: FakeNode;
  let g: TestGateway;
  before(async () => {
    anvil = await startAnvil();
    lagging = await startLaggingNode(anvil.url, 3);
    ahead = await startFakeNode(anvil.url);
    g = await startTestGateway({
      networks: { lag: { chainId: 1, upstreams: [{ url: ahead.origin }, { url: lagging.url }] } },
      upstreams: { checkIntervalMs: 100 },
      cache: { enabled: false }, // every read reaches a node
    });
  });
  after(async () => {
    await g?.close();
    await ahead?.close();
    await lagging?.close();
    anvil?.stop();
  });

  const call = async (method: string, params: unknown[]) => {
    const r = await g.rpc({ jsonrpc: '2.0', id: 1, method, params }, { network: 'lag' });
    return r.status === 200 && r.body && !r.body.error ? { result: r.body.result } : { error: `${r.status} ${JSON.stringify(r.body?.error)}` };
  };

  test(`${ROUNDS} rounds of send, receipt, then lookups by hash, logs by block hash, nonce and block number: 0 read-your-writes violations`, async () => {
    await eventually(() => g.gw.networks.get('lag')!.chain.status().every((s) => s.state === 'up'), 10_000, 'both nodes up');
    const violations: string[] = [];
    const seen = (what: string, ok: boolean, detail: () => string) => { if (!ok) violations.push(`${what}: ${detail()}`); };
    let laggingAnswered = 0;
    for (let nonce = 0; nonce < ROUNDS; nonce++) {
      const { hash, receipt } = await sendAndReceipt(call, account, nonce);
      const block = Number(receipt.blockNumber);
      // Everything after the receipt was seen must agree with it.
      const again = await call('eth_getTransactionReceipt', [hash]);
      seen('receipt again', !!(again.result as any)?.blockHash, () => JSON.stringify(again));
      const tx = await call('eth_getTransactionByHash', [hash]);
      seen('transaction by hash', (tx.result as any)?.blockNumber === receipt.blockNumber, () => JSON.stringify(tx));
      const byHash = await call('eth_getBlockByHash', [receipt.blockHash, false]);
      seen('block by hash', (byHash.result as any)?.hash === receipt.blockHash, () => JSON.stringify(byHash));
      const byNumber = await call('eth_getBlockByNumber', [receipt.blockNumber, false]);
      seen('block by number', (byNumber.result as any)?.hash === receipt.blockHash, () => JSON.stringify(byNumber));
      const logs = await call('eth_getLogs', [{ blockHash: receipt.blockHash }]);
      seen('logs by block hash', Array.isArray(logs.result), () => JSON.stringify(logs));
      const count = await call('eth_getTransactionCount', [account.address, 'latest']);
      seen('nonce', Number(count.result) >= nonce + 1, () => `${JSON.stringify(count)} after nonce ${nonce}`);
      const head = await call('eth_blockNumber', []);
      seen('block number', Number(head.result) >= block, () => `${JSON.stringify(head)} after block ${block}`);
    }
    laggingAnswered = [...lagging.calls.values()].reduce((a, b) => a + b, 0);
    console.log(`lagging node: ${ROUNDS} rounds, ${violations.length} read-your-writes violations; the lagging node answered ${laggingAnswered} calls `
      + `(${[...lagging.calls].map(([m, n]) => `${m} ${n}`).join(', ')})`);
    const kinds = new Map<string, number>();
    for (const v of violations) kinds.set(v.split(':')[0], (kinds.get(v.split(':')[0]) ?? 0) + 1);
    assert.deepEqual(violations.slice(0, 3), [], `${violations.length} violations: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    assert.ok((lagging.calls.get('eth_getTransactionReceipt') ?? 0) > ROUNDS / 4, 'the lagging node did take lookups by hash (the test tests something)');
  });

  test('only the lagging node left: eth_blockNumber never goes back for any client, and a filter reports no removed log when no block changed', async () => {
    // A contract that logs on every call (runtime PUSH1 0 PUSH1 0 LOG0 STOP), and a log filter that reported the
    // logs of the last blocks while both nodes served: the lagging node has not seen those blocks yet.
    const nonce = Number((await call('eth_getTransactionCount', [account.address, 'latest'])).result);
    const tx = (n: number, more: { to?: `0x${string}`; data?: `0x${string}` }) => account.signTransaction({
      chainId: 1, type: 'eip1559', nonce: n, gas: 100_000n, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, ...more,
    });
    const deployed = await call('eth_sendRawTransaction', [await tx(nonce, { data: '0x6006600c60003960066000f360006000a000' })]);
    let made: any;
    while (!made) made = (await call('eth_getTransactionReceipt', [deployed.result])).result;
    const filter = await call('eth_newFilter', [{ fromBlock: 'latest', address: made.contractAddress }]);
    assert.ok(filter.result, `filter: ${filter.error}`);
    for (let i = 1; i <= 3; i++) {
      const sent = await call('eth_sendRawTransaction', [await tx(nonce + i, { to: made.contractAddress })]);
      let r: any;
      while (!r) r = (await call('eth_getTransactionReceipt', [sent.result])).result;
    }
    const reported: unknown[] = [];
    for (let i = 0; i < 100 && reported.length < 3; i++) reported.push(...((await call('eth_getFilterChanges', [filter.result])).result as unknown[] ?? []));
    assert.equal(reported.length, 3, 'the filter reported the three logs');
    const seenHead = Number((await call('eth_blockNumber', [])).result);
    // The node ahead is gone (its connections refused): only the node 3 blocks behind is left.
    await ahead.close();
    const heads: number[] = [];
    const errors: string[] = [];
    const removed: unknown[] = [];
    const end = Date.now() + 3000;
    while (Date.now() < end) {
      const h = await call('eth_blockNumber', []);
      if (h.error) errors.push(`eth_blockNumber: ${h.error}`);
      else heads.push(Number(h.result));
      const changes = await call('eth_getFilterChanges', [filter.result]);
      if (Array.isArray(changes.result)) removed.push(...(changes.result as Array<{ removed?: boolean }>).filter((l) => l.removed));
    }
    // What is at the head the client saw: a clear -32002, not the lagging node's older state or its "header not
    // found"; what is older: answered.
    const atHead = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [account.address, 'latest'] }, { network: 'lag' });
    const older = await call('eth_getBalance', [account.address, `0x${(seenHead - 10).toString(16)}`]);
    console.log(`only the lagging node: eth_getBalance at latest: ${atHead.status} ${JSON.stringify(atHead.body?.error ?? atHead.body?.result)}; at an older block: ${JSON.stringify(older)}`);
    assert.equal(atHead.body?.error?.code, -32002, JSON.stringify(atHead.body));
    assert.match(atHead.body.error.data.detail, /no node that answers has block/);
    assert.ok(older.result, `an older block is answered: ${older.error}`);
    const lowest = Math.min(...heads);
    console.log(`only the lagging node: ${heads.length} eth_blockNumber answers after the client saw ${seenHead}: lowest ${lowest}, highest ${Math.max(...heads)}; ${errors.length} errors; ${removed.length} removed logs`);
    assert.ok(heads.length > 10, 'eth_blockNumber kept being answered');
    assert.ok(lowest >= seenHead, `eth_blockNumber went back from ${seenHead} to ${lowest}`);
    assert.deepEqual(removed, [], 'no log reported removed: no block changed');
  });
});
