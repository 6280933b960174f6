import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkOptions } from './webhook-options.ts';

const A = `0x${'ab'.repeat(20)}`;
const T = `0x${'cd'.repeat(32)}`;

describe('webhook options, checked per kind', () => {
  test('a logs address that can never match is refused, naming the field', () => {
    assert.deepEqual(checkOptions('logs', { address: '0x123' }), { field: 'options.address', message: 'not an address (0x and 40 hex digits)' });
    assert.deepEqual(checkOptions('logs', { address: [A, '0x123'] }), { field: 'options.address[1]', message: 'not an address (0x and 40 hex digits)' });
    assert.equal(checkOptions('logs', { address: A, topics: [T, null, [T, T]] }), undefined);
    assert.equal(checkOptions('logs', {}), undefined, 'every log of the network');
  });

  test('topics are 0x and 64 hex digits or null, at most 4 positions', () => {
    assert.deepEqual(checkOptions('logs', { topics: [T, '0xdead'] }), { field: 'options.topics[1]', message: 'not a topic (0x and 64 hex digits) or null' });
    assert.deepEqual(checkOptions('logs', { topics: [null, [T, 7]] }), { field: 'options.topics[1][1]', message: 'not a topic (0x and 64 hex digits) or null' });
    assert.equal(checkOptions('logs', { topics: [T, T, T, T, T] })?.field, 'options.topics');
  });

  test('address.activity and transaction.mined need a bounded list of the right things', () => {
    assert.deepEqual(checkOptions('address.activity', { addresses: [A, '0x123'] }), { field: 'options.addresses[1]', message: 'not an address (0x and 40 hex digits)' });
    assert.equal(checkOptions('address.activity', { addresses: [] })?.field, 'options.addresses');
    assert.equal(checkOptions('address.activity', { addresses: Array(1001).fill(A) })?.field, 'options.addresses');
    assert.equal(checkOptions('address.activity', { addresses: Array(1000).fill(A) }), undefined);
    assert.deepEqual(checkOptions('transaction.mined', { hashes: [A] }), { field: 'options.hashes[0]', message: 'not a transaction hash (0x and 64 hex digits)' });
    assert.equal(checkOptions('transaction.mined', { hashes: [T] }), undefined);
  });

  test('an option the kind does not take is refused by name', () => {
    assert.deepEqual(checkOptions('usage.threshold', { percent: 90 }), { field: 'options.percent', message: 'not an option of usage.threshold webhooks (it takes no options)' });
    assert.equal(checkOptions('block.mined', { address: A })?.field, 'options.address');
    assert.equal(checkOptions('usage.threshold', {}), undefined);
  });
});
