import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Interface } from 'ethers';
import { startAnvil, type TestAnvil } from '../../../test/helpers/anvil.ts';
import { compileEmitter } from '../../../test/helpers/emitter.ts';
import { check, headerOf, type CheckContext } from './checks.ts';
import { headerHash } from './header-hash.ts';
import { receiptsRoot } from './receipts-root.ts';

const SENDER = '0xf39Fd6e51aad88F6F4ce6aB8827279cfFFb92266';
let node: TestAnvil;
let block: any;
let receipts: any[];
let logs: any[];

/** A block of five transactions emitting three logs each, and a plain transfer, on a real anvil (prague). */
before(async () => {
  node = await startAnvil();
  const { abi, bytecode } = compileEmitter();
  const deployed = await node.call('eth_sendTransaction', [{ from: SENDER, data: bytecode, gas: '0x7a1200' }]);
  let emitter: string | undefined;
  for (let i = 0; i < 100 && !emitter; i++) emitter = (await node.call('eth_getTransactionReceipt', [deployed]))?.contractAddress;
  await node.call('evm_setAutomine', [false]);
  const iface = new Interface(abi);
  for (let i = 0; i < 5; i++) await node.call('eth_sendTransaction', [{ from: SENDER, to: emitter, data: iface.encodeFunctionData('emitMany', [3, i]), gas: '0x7a1200' }]);
  await node.call('eth_sendTransaction', [{ from: SENDER, to: '0x00000000000000000000000000000000000000b0', value: '0x1' }]);
  await node.call('evm_mine');
  const n = await node.call('eth_blockNumber');
  block = await node.call('eth_getBlockByNumber', [n, false]);
  receipts = await node.call('eth_getBlockReceipts', [n]);
  logs = await node.call('eth_getLogs', [{ fromBlock: n, toBlock: n }]);
});
after(() => node?.stop());

const ctx = (full = true): CheckContext => ({
  full, knownHash: () => undefined, final: () => true,
  kept: (n) => (n === Number(block.number) ? headerOf(block) : undefined),
  header: (n) => (n === Number(block.number) ? headerOf(block) : undefined),
});
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x));

describe('verify: answers checked against their block', () => {
  test('a block\'s hash is its header\'s fields\' (RLP, keccak-256), and its receipts\' trie root is its receiptsRoot', () => {
    assert.ok(receipts.length >= 5 && logs.length >= 15, `${receipts.length} receipts, ${logs.length} logs`);
    assert.equal(headerHash(block), block.hash);
    assert.equal(receiptsRoot(receipts), block.receiptsRoot);
    assert.equal(headerHash({ ...block, newField: '0x1' }), undefined, 'a header with a field it does not know: nothing said');
  });

  test('true answers pass every check', async () => {
    const n = block.number;
    assert.equal(check('block', [n, false], block, ctx()), undefined);
    assert.equal(await check('logs', [{ fromBlock: n, toBlock: n }], logs, ctx()), undefined);
    assert.equal(await check('receipts', [n], receipts, ctx()), undefined);
    assert.equal(await check('receipts', [block.hash], receipts, ctx()), undefined, 'asked by the block\'s hash');
    assert.equal(await check('receipt', [receipts[2].transactionHash], receipts[2], ctx()), undefined);
    assert.equal(check('logs', [{ fromBlock: n, toBlock: n, topics: ['0x' + 'ee'.repeat(32)] }], [], ctx()), undefined, 'an empty answer the bloom agrees with is an answer');
    assert.equal(check('receipt', ['0x' + '11'.repeat(32)], null, ctx()), undefined);
  });

  test('each lie is caught: another hash, a log not in the bloom, a receipt of another block, logs out of order or range, receipts not the root\'s', async () => {
    const n = block.number;
    assert.equal(check('block', [n, false], { ...block, hash: '0x' + 'ab'.repeat(32) }, ctx()), 'block-hash');
    assert.equal(check('block', ['0x100', false], block, ctx()), 'block-number');
    const forged = clone(logs);
    forged[4].topics[0] = '0x' + 'ee'.repeat(32);
    assert.equal(await check('logs', [{ fromBlock: n, toBlock: n }], forged, ctx()), 'log-bloom');
    assert.equal(await check('logs', [{ fromBlock: n, toBlock: n, address: logs[0].address }], [logs[1], logs[0]], ctx()), 'log-order');
    assert.equal(await check('logs', [{ fromBlock: '0x100', toBlock: '0x101' }], logs, ctx()), 'log-range');
    assert.equal(await check('logs', [{ fromBlock: n, toBlock: n, address: '0x' + '00'.repeat(20) }], logs, ctx()), 'log-filter');
    const elsewhere = { ...receipts[1], blockHash: '0x' + '12'.repeat(32), logs: receipts[1].logs.map((l: any) => ({ ...l, blockHash: '0x' + '12'.repeat(32) })) };
    assert.equal(await check('receipt', [receipts[1].transactionHash], elsewhere, ctx()), 'receipt-block');
    assert.equal(await check('receipt', ['0x' + '11'.repeat(32)], receipts[1], ctx()), 'receipt-tx');
    const changed = clone(receipts);
    changed[0].cumulativeGasUsed = '0x1';
    assert.equal(await check('receipts', [n], changed, ctx(true)), 'receipts-root');
    assert.equal(await check('receipts', [n], changed, ctx(false)), undefined, 'cheap: the root is not worked out');
  });

  test('cheap checks a block\'s hash, logs against their block\'s bloom, receipts against their block; unfiltered logs numbered from 0', async () => {
    const n = block.number;
    assert.equal(check('block', [n, false], { ...block, hash: '0x' + 'ab'.repeat(32) }, ctx(false)), 'block-hash');
    const forged = clone(logs);
    forged[4].topics[0] = '0x' + 'ee'.repeat(32);
    assert.equal(await check('logs', [{ fromBlock: n, toBlock: n }], forged, ctx(false)), 'log-bloom');
    const elsewhere = { ...receipts[1], blockHash: '0x' + '12'.repeat(32), logs: receipts[1].logs.map((l: any) => ({ ...l, blockHash: '0x' + '12'.repeat(32) })) };
    assert.equal(await check('receipt', [receipts[1].transactionHash], elsewhere, ctx(false)), 'receipt-block');
    assert.equal(await check('logs', [{ fromBlock: n, toBlock: n }], logs.slice(1), ctx(false)), 'log-index', 'an unfiltered answer that skips a log');
    assert.equal(await check('logs', [{ fromBlock: n, toBlock: n, address: logs[0].address }], logs.slice(1), ctx(false)), undefined, 'a filtered one may');
  });

  test('an empty answer for a block whose bloom admits the filter is a doubt; one the bloom rules out is an answer', async () => {
    const n = block.number;
    assert.equal(check('logs', [{ fromBlock: n, toBlock: n }], [], ctx(false)), 'logs-missing');
    assert.equal(check('logs', [{ fromBlock: n, toBlock: n, address: logs[0].address }], [], ctx(false)), 'logs-missing');
    assert.equal(check('logs', [{ fromBlock: n, toBlock: n, address: '0x' + '00'.repeat(20) }], [], ctx(false)), undefined);
  });

  test('a header no node gives soundly fails the answer; a block near the head on another branch is not judged', async () => {
    const n = block.number;
    const unsound: CheckContext = { ...ctx(false), kept: () => undefined, header: () => 'unsound' };
    assert.equal(await check('receipt', [receipts[1].transactionHash], receipts[1], unsound), 'block-header');
    const other = { ...receipts[1], blockHash: '0x' + '12'.repeat(32), logs: receipts[1].logs.map((l: any) => ({ ...l, blockHash: '0x' + '12'.repeat(32) })) };
    assert.equal(await check('receipt', [receipts[1].transactionHash], other, { ...ctx(false), final: () => false }), undefined);
    assert.equal(await check('logs', [{ fromBlock: n, toBlock: n }], logs, { ...ctx(false), kept: () => undefined, header: () => undefined }), undefined, 'no header: nothing said');
  });
});
