import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkKeyRules } from './key-rules.ts';

const names = { networks: new Map([['mainnet', 'mainnet'], ['devnet', 'testnet']]), methods: new Set(['eth_call', 'eth_getLogs']) };
const refusal = (input: Parameters<typeof checkKeyRules>[0]) => {
  try {
    checkKeyRules(input, names);
  } catch (e) {
    return (e as Error).message;
  }
  return 'accepted';
};

test('an IP allowlist is refused naming every wrong entry, a prefix too long and an address cut short alike', () => {
  assert.equal(refusal({ ipAllowlist: ['10.0.0.0/33', 'not-an-ip', '192.0.2.1'] }), 'ipAllowlist: not IP addresses or CIDRs: 10.0.0.0/33, not-an-ip');
  assert.equal(refusal({ ipAllowlist: ['1.2.3'] }), 'ipAllowlist: not an IP address or CIDR: 1.2.3');
  assert.equal(refusal({ ipAllowlist: ['010.1.2.3'] }), 'ipAllowlist: not an IP address or CIDR: 010.1.2.3');
  assert.equal(refusal({ ipAllowlist: ['10.0.0.0/8', '2001:db8::/32', '::1'] }), 'accepted');
});

test('contracts are addresses, kept lowercase; methods of the denylist are allowed ones; user agents and ranges bounded', () => {
  const a = '0x' + 'AB'.repeat(20);
  assert.deepEqual(checkKeyRules({ contractAllowlist: [a, a.toLowerCase()] }, names), { contractAllowlist: [a.toLowerCase()] });
  assert.equal(refusal({ contractAllowlist: ['0x12', 'vitalik.eth'] }), 'contractAllowlist: not an address (0x and 40 hex digits): 0x12, vitalik.eth');
  assert.equal(refusal({ methodDenylist: ['eth_call', 'eth_nope'] }), 'methodDenylist: not an allowed method: eth_nope');
  assert.equal(refusal({ userAgentAllowlist: [' '] }), 'userAgentAllowlist: empty or longer than 200 characters:  ');
  assert.equal(refusal({ logsMaxBlockRange: 0 }), "logsMaxBlockRange: a whole number of blocks from 1 to 1000000000, or null for the network's bound");
  assert.deepEqual(checkKeyRules({ logsMaxBlockRange: null, networkAllowlist: ['devnet'] }, names), { logsMaxBlockRange: null, networkAllowlist: ['testnet'] });
});
