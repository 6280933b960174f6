import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getAddress, parseEther, serializeTransaction } from 'viem';
import { rawTransactionTo } from './raw-transaction-to.ts';

/** Checksummed (mixed case), as clients send it. */
const to = getAddress('0x' + 'ab'.repeat(20));
const sig = { r: ('0x' + '11'.repeat(32)) as `0x${string}`, s: ('0x' + '22'.repeat(32)) as `0x${string}`, yParity: 1 } as const;

test('reads the to of every transaction type a node takes, lowercase', () => {
  const base = { to: to, value: parseEther('1'), nonce: 7, gas: 21000n, chainId: 1 };
  const raws = [
    serializeTransaction({ ...base, type: 'legacy', gasPrice: 10n ** 9n }, { r: sig.r, s: sig.s, v: 37n }),
    serializeTransaction({ ...base, type: 'eip2930', gasPrice: 10n ** 9n, accessList: [] }, sig),
    serializeTransaction({ ...base, type: 'eip1559', maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n }, sig),
    serializeTransaction({
      ...base, type: 'eip7702', maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n,
      authorizationList: [{ address: to, chainId: 1, nonce: 0, ...sig }],
    }, sig),
  ];
  for (const raw of raws) assert.equal(rawTransactionTo(raw), to.toLowerCase(), raw.slice(0, 6));
});

test('a contract creation has no to; bytes that are no transaction cannot be read', () => {
  const creation = serializeTransaction({ type: 'eip1559', chainId: 1, nonce: 0, gas: 10n ** 6n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, data: '0x6000' }, sig);
  assert.equal(rawTransactionTo(creation), null);
  const legacyLongData = serializeTransaction({ type: 'legacy', to: to, gasPrice: 1n, gas: 1n, nonce: 0, data: `0x${'ff'.repeat(300)}` }, { r: sig.r, s: sig.s, v: 27n });
  assert.equal(rawTransactionTo(legacyLongData), to.toLowerCase(), 'a list whose length takes two bytes');
  for (const junk of ['0x', '0x05c0', '0x02', '0x02c5', '0xf8', '0x' + 'ff'.repeat(10)]) assert.equal(rawTransactionTo(junk), undefined, junk);
});
