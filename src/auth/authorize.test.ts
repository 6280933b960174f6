import assert from 'node:assert/strict';
import { test } from 'node:test';
import { authorizeCall } from './authorize.ts';
import { METHOD_SPECS } from '../methods/specs.ts';

const A = '0x' + 'aa'.repeat(20);
const B = '0x' + 'bb'.repeat(20);
const head = { number: 1000, safe: 990, finalized: 960 };
const spec = (name: string) => METHOD_SPECS.get(name)!;
const outcome = (rules: Parameters<typeof authorizeCall>[0], method: string, params: unknown[]) => {
  try {
    authorizeCall(rules, spec(method), params, head);
    return 'allowed';
  } catch (e) {
    return (e as Error).message;
  }
};

test('a contract allowlist holds every call that names contracts, where its method spec says they are', () => {
  const rules = { contracts: new Set([A]), logsRange: undefined };
  assert.equal(outcome(rules, 'eth_call', [{ to: A.toUpperCase().replace('0X', '0x') }, 'latest']), 'allowed');
  assert.equal(outcome(rules, 'eth_call', [{ to: B }, 'latest']), `forbidden: contract ${B} is not in the key's allowlist`);
  assert.equal(outcome(rules, 'eth_estimateGas', [{ data: '0x00' }]), 'forbidden: the key calls its allowed contracts only: a contract creation is not one');
  assert.equal(outcome(rules, 'eth_getLogs', [{ address: [A, B] }]), `forbidden: contract ${B} is not in the key's allowlist`);
  assert.equal(outcome(rules, 'eth_getLogs', [{ fromBlock: '0x1' }]), "forbidden: the key reads the logs of its allowed contracts only: name them in the filter's address");
  assert.equal(outcome(rules, 'eth_subscribe', ['newHeads']), 'allowed');
  assert.equal(outcome(rules, 'eth_subscribe', ['logs', { address: B }]), `forbidden: contract ${B} is not in the key's allowlist`);
  assert.equal(outcome(rules, 'eth_sendRawTransaction', ['0x02c0']), "forbidden: the transaction's contract cannot be read, and the key calls its allowed contracts only");
  assert.equal(outcome(rules, 'eth_getBalance', [B, 'latest']), 'allowed', 'a method that names no contract in its spec');
});

test("a key's eth_getLogs range: tags read from the head at once, refused with the range that fits", () => {
  const rules = { contracts: undefined, logsRange: 100 };
  assert.equal(outcome(rules, 'eth_getLogs', [{ fromBlock: '0x385', toBlock: 'latest' }]), 'allowed');
  assert.equal(outcome(rules, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x63' }]), 'allowed');
  assert.equal(outcome(rules, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x64' }]), 'query returned more than 100 results. Try with this block range [0x0, 0x63].');
  assert.equal(outcome(rules, 'eth_getLogs', [{ fromBlock: 'earliest' }]), 'query returned more than 100 results. Try with this block range [0x0, 0x63].');
  assert.equal(outcome(rules, 'eth_getLogs', [{ fromBlock: 'finalized' }]), 'allowed', '41 blocks');
  assert.equal(outcome(rules, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: 'safe' }]), 'query returned more than 100 results. Try with this block range [0x0, 0x63].');
  assert.equal(outcome(rules, 'eth_getLogs', [{ blockHash: '0x' + '11'.repeat(32) }]), 'allowed');
  // A filter's range is read later by eth_getFilterLogs: held to the key's range when it is made.
  assert.equal(outcome(rules, 'eth_newFilter', [{ fromBlock: '0x0' }]), 'query returned more than 100 results. Try with this block range [0x0, 0x63].');
  assert.equal(outcome(rules, 'eth_newFilter', [{}]), 'allowed', 'from the head on');
});
