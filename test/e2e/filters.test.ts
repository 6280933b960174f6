import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encodeFunctionData } from 'viem';
import { compileCounter, counterInitCode } from '../helpers/counter.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * docs/decisions.md §8: filters are kept by the gateway. They belong to the key that made them, expire unpolled, count
 * against the plan's filters per key, survive the node behind them (an embedded anvil restarted), and report the
 * logs of blocks a reorganisation dropped with `removed: true`.
 */
describe('filters kept by the gateway', { timeout: 120_000 }, () => {
  let g: TestGateway;
  let counter: string;
  let increment: string;
  let from: string;

  const rpc = (method: string, params: unknown[] = [], key?: string) => g.rpc({ jsonrpc: '2.0', id: 7, method, params }, { key });
  const ok = async <T = any>(method: string, params: unknown[] = [], key?: string): Promise<T> => {
    const r = await rpc(method, params, key);
    assert.equal(r.status, 200, `${method}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error, undefined, `${method}: ${JSON.stringify(r.body.error)}`);
    return r.body.result as T;
  };
  /** Sends a transaction from a node account and waits for its receipt (anvil may answer just before it mines). */
  const send = async (params: Record<string, string>) => {
    const hash = await ok<string>('eth_sendTransaction', [{ from, ...params }]);
    const end = Date.now() + 10_000;
    for (;;) {
      const receipt = await ok<{ blockNumber: string; blockHash: string; contractAddress: string | null } | null>('eth_getTransactionReceipt', [hash]);
      if (receipt) return receipt;
      assert.ok(Date.now() < end, `no receipt for ${hash} within 10 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  /** The anvil behind mainnet, called directly: the gateway refuses anvil_ and evm_ methods. */
  const node = async (method: string, params: unknown[] = []) => {
    const a = await g.gw.networks.get('mainnet')!.chain.call(method, params, 5000);
    assert.equal(a.error, undefined, `${method}: ${JSON.stringify(a.error)}`);
    return a.result as any;
  };
  const newKey = async (planId: string) => {
    const acct = await g.gw.accounts.createAccount({ name: planId, email: `${planId}-${Math.random()}@example.com`, planId });
    return (await g.gw.accounts.createKey(acct.id, { name: planId })).value;
  };

  before(async () => {
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 }, testnet: { chainId: 11155111 } }, filters: { idleTimeoutMs: 1500 } });
    [from] = await ok<string[]>('eth_accounts');
    counter = (await send({ data: counterInitCode(0) })).contractAddress!;
    increment = encodeFunctionData({ abi: compileCounter().abi, functionName: 'increment' });
    await g.gw.accounts.createPlan({ id: 'two', name: 'Two filters', cuPerSecond: 100_000, cuPerMonth: 1_000_000_000, maxBatchSize: 100, debugMethods: false, maxFilters: 2 });
  });
  after(() => g?.close());

  test('a log filter has a 128-bit id, reports each new log once, and its logs on demand', async () => {
    const before = await send({ to: counter, data: increment });
    const id = await ok<string>('eth_newFilter', [{ address: counter, fromBlock: '0x0' }]);
    assert.match(id, /^0x[1-9a-f][0-9a-f]{0,31}$/);
    assert.ok(id.length > 20, 'a random 128-bit id, not a counter');
    assert.deepEqual(await ok('eth_getFilterChanges', [id]), [], 'nothing happened yet');
    const r1 = await send({ to: counter, data: increment });
    const r2 = await send({ to: counter, data: increment });
    const changes = await ok<any[]>('eth_getFilterChanges', [id]);
    assert.deepEqual(changes.map((l) => l.blockHash), [r1.blockHash, r2.blockHash]);
    assert.ok(changes.every((l) => l.address.toLowerCase() === counter.toLowerCase() && l.removed === false));
    assert.deepEqual(await ok('eth_getFilterChanges', [id]), [], 'reported once');
    const all = await ok<any[]>('eth_getFilterLogs', [id]);
    assert.deepEqual(all.slice(-2).map((l) => l.blockHash), [r1.blockHash, r2.blockHash], 'eth_getFilterLogs: every log from fromBlock');
    assert.equal(all.length, 3);
    assert.equal(all[0].blockHash, before.blockHash, 'a log from before the filter was made: getFilterLogs is eth_getLogs');
    assert.equal(await ok('eth_uninstallFilter', [id]), true);
    assert.equal(await ok('eth_uninstallFilter', [id]), false, 'a second uninstall finds nothing');
    const gone = await rpc('eth_getFilterChanges', [id]);
    assert.deepEqual(gone.body.error, { code: -32000, message: 'filter not found', data: { reason: 'filter_not_found' } });
  });

  test('a log filter reports only what matches its address and topics', async () => {
    const other = (await send({ data: counterInitCode(0) })).contractAddress!;
    const id = await ok<string>('eth_newFilter', [{ address: other }]);
    await send({ to: counter, data: increment });
    assert.deepEqual(await ok('eth_getFilterChanges', [id]), [], 'another contract\'s log is not reported');
    const r = await send({ to: other, data: increment });
    const changes = await ok<any[]>('eth_getFilterChanges', [id]);
    assert.equal(changes.length, 1);
    assert.equal(changes[0].transactionHash.toLowerCase(), (await ok<any>('eth_getBlockByHash', [r.blockHash, false])).transactions[0]);
    const none = await ok<string>('eth_newFilter', [{ address: other, topics: ['0x' + 'ab'.repeat(32)] }]);
    await send({ to: other, data: increment });
    assert.deepEqual(await ok('eth_getFilterChanges', [none]), [], 'a topic that never occurs');
  });

  test('a block filter reports the hashes of new blocks, in order', async () => {
    const id = await ok<string>('eth_newBlockFilter');
    const hashes = [];
    for (let i = 0; i < 3; i++) hashes.push((await send({ to: '0x000000000000000000000000000000000000dEaD', value: '0x1' })).blockHash);
    assert.deepEqual(await ok('eth_getFilterChanges', [id]), hashes);
    assert.deepEqual(await ok('eth_getFilterChanges', [id]), []);
    const r = await rpc('eth_getFilterLogs', [id]);
    assert.equal(r.body.error.code, -32000, 'a block filter has no logs (geth: filter not found)');
  });

  test('a pending-transaction filter reports transactions sent through the gateway', async () => {
    const id = await ok<string>('eth_newPendingTransactionFilter');
    const hash = await ok<string>('eth_sendTransaction', [{ from, to: '0x000000000000000000000000000000000000dEaD', value: '0x2' }]);
    const changes = await ok<string[]>('eth_getFilterChanges', [id]);
    assert.deepEqual(changes, [hash]);
    assert.deepEqual(await ok('eth_getFilterChanges', [id]), []);
  });

  test("another key's filter is not found, cannot be uninstalled, and a filter is bound to its network", async () => {
    const id = await ok<string>('eth_newBlockFilter');
    const stranger = await newKey('free');
    const r = await rpc('eth_getFilterChanges', [id], stranger);
    assert.equal(r.body.error.code, -32000);
    assert.equal(r.body.error.message, 'filter not found');
    assert.equal(await ok('eth_uninstallFilter', [id], stranger), false);
    const other = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getFilterChanges', params: [id] }, { network: 'testnet' });
    assert.equal(other.body.error.code, -32000, 'polled on another network');
    assert.deepEqual(await ok('eth_getFilterChanges', [id]), [], 'still there for its owner');
  });

  test("the plan's filters per key and per account are enforced; an uninstalled filter frees its place", async () => {
    const account = await g.gw.accounts.createAccount({ name: 'two', email: `two-${Math.random()}@example.com`, planId: 'two' });
    const key = (await g.gw.accounts.createKey(account.id, { name: 'first' })).value;
    const a = await ok<string>('eth_newBlockFilter', [], key);
    await ok<string>('eth_newFilter', [{}], key);
    const r = await rpc('eth_newPendingTransactionFilter', [], key);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.error, {
      code: -32005,
      message: 'too many filters: this account may keep 2 at once; uninstall one or let one expire',
      data: { reason: 'filter_limit', limit: 2 },
    });
    // Another key of the same account shares the account's filters (keys are free to make; filters are not).
    const sibling = (await g.gw.accounts.createKey(account.id, { name: 'sibling' })).value;
    assert.equal((await rpc('eth_newBlockFilter', [], sibling)).body.error?.data.reason, 'filter_limit');
    assert.equal(await ok('eth_uninstallFilter', [a], key), true);
    assert.match(await ok<string>('eth_newPendingTransactionFilter', [], key), /^0x/);
  });

  test('a filter not polled for the idle time expires; one that is polled stays', async () => {
    const idle = await ok<string>('eth_newBlockFilter');
    const polled = await ok<string>('eth_newBlockFilter');
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 500));
      await ok('eth_getFilterChanges', [polled]);
    }
    const r = await rpc('eth_getFilterChanges', [idle]);
    assert.equal(r.body.error?.message, 'filter not found', 'expired after 1.5 s unpolled');
    assert.equal(await ok('eth_uninstallFilter', [idle]), false);
  });

  test('filters outlive the node: the embedded anvil killed and restarted, the filter still reports', async () => {
    const id = await ok<string>('eth_newFilter', [{ address: counter }]);
    const supervisor = g.gw.networks.supervisors.find((s) => s.network === 'mainnet')!;
    const pid = supervisor.pid!;
    process.kill(pid, 'SIGKILL');
    // Its client goes on polling it meanwhile, as clients do: a poll waits for the node back (or fails) and keeps the
    // filter, however long the restart takes (the journal replayed, on a busy machine: longer than the 1.5 s idle
    // time here), and it answers once the node does.
    const end = Date.now() + 30_000;
    for (;;) {
      if (supervisor.pid !== pid) {
        const p = await rpc('eth_getFilterChanges', [id]);
        assert.notEqual(p.body.error?.data?.reason, 'filter_not_found', 'a filter polled while its node restarts stays');
        if (p.body.error === undefined) break;
      }
      assert.ok(Date.now() < end, 'anvil back within 30 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await send({ to: counter, data: increment });
    const changes = await ok<any[]>('eth_getFilterChanges', [id]);
    // The new transaction's log, always. If the restored chain lacked the last blocks, their transactions were sent
    // again from the journal into new blocks, which are new to the filter too (as a reorganisation's are): reported
    // by the poll that saw the node back, or by this one.
    assert.ok(changes.some((l) => l.blockHash === r.blockHash && !l.removed), JSON.stringify(changes.map((l) => [l.blockNumber, l.removed])));
    assert.equal(changes.at(-1).blockHash, r.blockHash, 'the newest last');
  });

  test('logs of blocks a reorganisation dropped come again with removed: true, then the new branch', async () => {
    const logs = await ok<string>('eth_newFilter', [{ address: counter }]);
    const blocks = await ok<string>('eth_newBlockFilter');
    const snapshot = await node('evm_snapshot');
    const dropped = await send({ to: counter, data: increment });
    const first = await ok<any[]>('eth_getFilterChanges', [logs]);
    assert.deepEqual(first.map((l) => [l.blockHash, l.removed]), [[dropped.blockHash, false]]);
    assert.deepEqual(await ok('eth_getFilterChanges', [blocks]), [dropped.blockHash]);
    // The chain goes back before that block and grows another branch, longer than the first.
    assert.equal(await node('evm_revert', [snapshot]), true);
    await node('evm_mine');
    // Another gas limit: not the dropped transaction again (same sender and nonce), whose answers the cache keeps,
    // as an embedded chain never goes back except through the snapshot restore it knows of.
    const kept = await send({ to: counter, data: increment, gas: '0x30000' });
    assert.notEqual(kept.blockHash, dropped.blockHash);
    const after = await ok<any[]>('eth_getFilterChanges', [logs]);
    assert.deepEqual(after.map((l) => [l.blockHash, l.removed]), [[dropped.blockHash, true], [kept.blockHash, false]]);
    assert.deepEqual({ ...after[0], removed: false }, first[0], 'the removed log is the log reported before');
    const newBranch = await ok<string[]>('eth_getFilterChanges', [blocks]);
    assert.equal(newBranch.at(-1), kept.blockHash);
    assert.ok(!newBranch.includes(dropped.blockHash));
  });
});
