import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UpstreamAnswer } from '../../upstream/upstream.ts';
import { eth_getTransactionReceipt } from './eth_getTransactionReceipt.ts';

const node = (answer: UpstreamAnswer) => async () => answer;

test("anvil's numeric receipt blockTimestamp becomes a QUANTITY", async () => {
  const out = await eth_getTransactionReceipt('eth_getTransactionReceipt', ['0x1'], node({ result: { status: '0x1', blockTimestamp: 1735689600 } }));
  assert.deepEqual(out, { result: { status: '0x1', blockTimestamp: '0x67748580' } });
});

test('a geth receipt, a receipt without blockTimestamp, null and errors pass through untouched', async () => {
  for (const answer of [
    { result: { status: '0x1', blockTimestamp: '0x67748580' } },
    { result: { status: '0x1' } },
    { result: null },
    { error: { code: -32000, message: 'boom' } },
  ] as UpstreamAnswer[]) {
    assert.equal(await eth_getTransactionReceipt('eth_getTransactionReceipt', ['0x1'], node(answer)), answer);
  }
});
