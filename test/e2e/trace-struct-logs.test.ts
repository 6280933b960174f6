/**
 * docs/decisions.md §4: the embedded anvil runs without `--steps-tracing` (with it, every read waits ~1.6 s while
 * anvil mines a block of 3,000 logs), so its debug_trace* struct logs are empty; the gateway's adapters execute
 * such a transaction again (debug_traceCall on the state just before it). Here the same transactions, signed
 * once, are mined under the same timestamps on two anvils: one without the flag behind the gateway, one with the
 * flag asked directly. Every trace through the gateway must equal the flagged anvil's, byte for byte.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encodeFunctionData } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { compileCounter, counterInitCode } from '../helpers/counter.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** The first four accounts of the test mnemonic, funded in every anvil's genesis. */
const keys = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
] as const;
const [a0, a1, a2, a3] = keys.map((k) => privateKeyToAccount(k));
/** Where a0's first transaction (nonce 0) deploys. */
const COUNTER = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
const GWEI = 1_000_000_000n;

describe('debug_trace* struct logs on an anvil without --steps-tracing', { timeout: 120_000 }, () => {
  let plain: TestAnvil;
  let flagged: TestAnvil;
  let g: TestGateway;
  const { abi } = compileCounter();
  const hashes: Record<string, string> = {};
  let block2 = { number: '', hash: '' };

  before(async () => {
    [plain, flagged] = await Promise.all([startAnvil(), startAnvil(['--steps-tracing'])]);
    g = await startTestGateway({ networks: { plain: { chainId: 1, upstreams: [{ url: plain.url }] } }, cache: { enabled: false } });
    const eip1559 = (tip: bigint) => ({ chainId: 1, type: 'eip1559' as const, gas: 300_000n, maxFeePerGas: 20n * GWEI, maxPriorityFeePerGas: tip });
    const call = (fn: string, args: unknown[] = []) => encodeFunctionData({ abi, functionName: fn, args } as any);
    const blocks: Array<Array<[name: string, raw: Promise<string>]>> = [
      [['deploy', a0.signTransaction({ ...eip1559(GWEI), nonce: 0, data: counterInitCode(5) as `0x${string}` })]],
      // anvil orders a block by its own rules (fees, arrival); both anvils get the same, checked by the hash below.
      [
        ['increment', a0.signTransaction({ ...eip1559(9n * GWEI), nonce: 1, to: COUNTER, data: call('increment') })],
        ['add7', a1.signTransaction({ ...eip1559(8n * GWEI), nonce: 0, to: COUNTER, data: call('add', [7n]) })],
        ['transfer', a3.signTransaction({ chainId: 1, type: 'legacy', gas: 21_000n, gasPrice: 15n * GWEI, nonce: 0, to: a2.address, value: 1n })],
        ['legacyIncrement', a3.signTransaction({ chainId: 1, type: 'legacy', gas: 300_000n, gasPrice: 15n * GWEI, nonce: 1, to: COUNTER, data: call('increment') })],
        ['add700', a2.signTransaction({ ...eip1559(2n * GWEI), nonce: 0, to: COUNTER, data: call('add', [700n]) })],
      ],
    ];
    for (const node of [plain, flagged]) await node.call('evm_setAutomine', [false]);
    for (const [i, txs] of blocks.entries()) {
      for (const [name, raw] of txs) {
        for (const node of [plain, flagged]) hashes[name] = await node.call('eth_sendRawTransaction', [await raw]);
      }
      for (const node of [plain, flagged]) await node.call('evm_mine', [1_735_700_000 + i * 12]);
    }
    const [p, f] = await Promise.all([plain, flagged].map((n) => n.call('eth_getBlockByNumber', ['0x2', false])));
    assert.equal(p.hash, f.hash, 'both anvils hold the same chain');
    assert.equal(p.transactions.length, 5);
    block2 = { number: p.number, hash: p.hash };
  });
  after(async () => {
    await g?.close();
    plain?.stop();
    flagged?.stop();
  });

  const viaGateway = async (method: string, params: unknown[]) => {
    const r = await g.rpc({ jsonrpc: '2.0', id: 1, method, params }, { network: 'plain' });
    assert.equal(r.body?.error, undefined, `${method}: ${r.text.slice(0, 300)}`);
    return r.body.result;
  };

  test('debug_traceTransaction: the steps of a transaction first in its block, later in it, reverted, legacy, a creation, equal the flagged anvil\'s', async () => {
    const seen: string[] = [];
    for (const name of ['deploy', 'increment', 'add7', 'legacyIncrement', 'add700', 'transfer']) {
      for (const options of [{}, { enableMemory: true, enableReturnData: true }, { disableStack: true, disableStorage: true, limit: 25 }]) {
        const direct = await plain.call('debug_traceTransaction', [hashes[name], options]);
        const expected = await flagged.call('debug_traceTransaction', [hashes[name], options]);
        const got = await viaGateway('debug_traceTransaction', [hashes[name], options]);
        assert.deepEqual(got, expected, `${name} ${JSON.stringify(options)}`);
        if (JSON.stringify(options) === '{}') {
          seen.push(`${name}: gas ${got.gas} failed ${got.failed} steps ${got.structLogs.length} (plain anvil: ${direct.structLogs.length})`);
          if (name !== 'transfer') assert.ok(got.structLogs.length > 0 && direct.structLogs.length === 0, `${name}: the gap is there and closed`);
        }
      }
    }
    console.log(seen.join('\n'));
    const tx = await plain.call('eth_getTransactionByHash', [hashes.add7]);
    assert.equal(tx.transactionIndex, '0x1', 'add7 is second in its block');
  });

  test('debug_traceBlockByNumber and ByHash: every transaction\'s steps equal the flagged anvil\'s; callTracer untouched', async () => {
    const expected = await flagged.call('debug_traceBlockByHash', [block2.hash, {}]);
    assert.deepEqual(await viaGateway('debug_traceBlockByNumber', [block2.number, {}]), expected);
    assert.deepEqual(await viaGateway('debug_traceBlockByHash', [block2.hash]), expected);
    console.log('block 2 steps per transaction:', expected.map((t: any) => t.result.structLogs.length).join(', '));
    const frames = await flagged.call('debug_traceBlockByHash', [block2.hash, { tracer: 'callTracer' }]);
    assert.deepEqual(await viaGateway('debug_traceBlockByHash', [block2.hash, { tracer: 'callTracer' }]), frames);
  });
});
