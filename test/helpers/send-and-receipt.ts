import assert from 'node:assert/strict';
import type { PrivateKeyAccount } from 'viem/accounts';

export type RpcCall = (method: string, params: unknown[]) => Promise<{ result?: unknown; error?: string }>;

/**
 * A transfer signed with `nonce`, sent through `call`, then its receipt asked until it is there: the hash and the
 * receipt a client has once it "saw" its transaction, which every later read must agree with.
 */
export async function sendAndReceipt(call: RpcCall, account: PrivateKeyAccount, nonce: number): Promise<{ hash: string; receipt: any }> {
  const raw = await account.signTransaction({
    chainId: 1, type: 'eip1559', nonce, gas: 21_000n, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n,
    to: '0x00000000000000000000000000000000000000b0', value: 1n,
  });
  const sent = await call('eth_sendRawTransaction', [raw]);
  assert.ok(sent.result, `round ${nonce}: sent ${sent.error}`);
  const hash = sent.result as string;
  let receipt: any;
  for (let i = 0; !receipt; i++) {
    const r = await call('eth_getTransactionReceipt', [hash]);
    assert.ok(!r.error, `round ${nonce}: receipt ${r.error}`);
    receipt = r.result;
    assert.ok(i < 500, `round ${nonce}: never mined`);
  }
  return { hash, receipt };
}
