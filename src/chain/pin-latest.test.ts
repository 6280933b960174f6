import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pinLatest } from './pin-latest.ts';

test('latest, a left-out block and eth_getLogs bounds are pinned to the head; the upstream must have that block', () => {
  assert.deepEqual(pinLatest('eth_getBalance', ['0xa', 'latest'], 0x20), { params: ['0xa', '0x20'], block: 0x20 });
  assert.deepEqual(pinLatest('eth_call', [{}], 0x20), { params: [{}, '0x20'], block: 0x20 });
  assert.deepEqual(pinLatest('eth_getBlockByNumber', ['latest', false], 7), { params: ['0x7', false], block: 7 });
  assert.deepEqual(pinLatest('eth_getLogs', [{ fromBlock: '0x1' }], 9), { params: [{ fromBlock: '0x1', toBlock: '0x9' }], block: 9, from: 1 });
  assert.deepEqual(pinLatest('eth_getLogs', [{}], 9), { params: [{ fromBlock: '0x9', toBlock: '0x9' }], block: 9, from: 9 });
});

test('safe and finalized are pinned when the network knows them, else left to the node', () => {
  assert.deepEqual(pinLatest('eth_getBlockByNumber', ['finalized', false], 100, { finalized: 36, safe: 68 }), { params: ['0x24', false], block: 36 });
  assert.deepEqual(pinLatest('eth_getBalance', ['0xa', 'safe'], 100, { finalized: 36, safe: 68 }), { params: ['0xa', '0x44'], block: 68 });
  assert.equal(pinLatest('eth_getBlockByNumber', ['finalized', false], 100), undefined);
});

test('a named block is kept and must be on the upstream; pending, earliest, by-hash and other methods pass', () => {
  assert.deepEqual(pinLatest('eth_getBalance', ['0xa', '0x5'], 9), { params: ['0xa', '0x5'], block: 5 });
  assert.deepEqual(pinLatest('eth_call', [{}, { blockNumber: '0x6' }], 9), { params: [{}, { blockNumber: '0x6' }], block: 6 });
  assert.equal(pinLatest('eth_getBalance', ['0xa', 'pending'], 9), undefined);
  assert.equal(pinLatest('eth_getBlockByNumber', ['earliest', false], 9), undefined);
  assert.equal(pinLatest('eth_getLogs', [{ blockHash: '0xab' }], 9), undefined);
  assert.equal(pinLatest('eth_getTransactionReceipt', ['0xab'], 9), undefined);
});
