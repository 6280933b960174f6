/**
 * The real-client workflow suite, shared by client-workflows.test.ts and workers.test.ts. What a new user
 * does first: start Nodegate as the README's quick start does (no configuration, a fresh data directory), take the key its banner prints, and do ordinary work with ethers v6, viem and Foundry's `cast`,
 * each with its default settings (but ethers' own 250 ms answer cache, see below): deploy a contract, send 20 transactions in a row waiting for each, then trace
 * (a transaction, a call and a block). Every client must finish with no call refused. The hosted-style plans would
 * refuse this (a transaction costs ~400 compute units); the embedded default's development plan must not.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Contract, ContractFactory, FetchRequest, JsonRpcProvider, Wallet } from 'ethers';
import { createPublicClient, createWalletClient, defineChain, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { cast } from './cast.ts';
import { compileCounter } from './counter.ts';
import { killAll, startNodegate, type NodegateProcess, type StartOptions } from './process.ts';

/** anvil's development accounts 5, 6 and 7 (mnemonic `test test ... junk`): one per client, so nonces never meet. */
const ETHERS_KEY = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
const VIEM_KEY = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e';
const CAST_KEY = '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356';
const TXS = 20;

/** The suite, on a Nodegate started with `opts` (the quick start's defaults when empty; `--workers 2` in workers.test.ts). */
export function clientWorkflows(title: string, opts: StartOptions = {}): void {
describe(title, { timeout: 600_000 }, () => {
  let ng: NodegateProcess;
  let url: string;
  const { abi, bytecode } = compileCounter();
  const deployCode = (bytecode + '0'.repeat(64)) as Hex; // Counter(0)
  /** What the gateway answered the clients with a status other than 200 (a 429 is a refusal). */
  const refusals: string[] = [];

  before(async () => {
    ng = await startNodegate(opts);
    url = ng.rpcUrl('mainnet');
  });
  after(async () => {
    await ng?.stop();
    await killAll();
    if (ng) rmSync(ng.dataDir, { recursive: true, force: true });
  });

  /** The three traces a debugging session asks for, on the same key. */
  async function traces(request: (method: string, params: unknown[]) => Promise<any>, tx: string, to: string, data: string) {
    const t = await request('debug_traceTransaction', [tx]);
    assert.equal(t.failed, false);
    assert.ok(Array.isArray(t.structLogs) && t.structLogs.length > 0, 'the trace has its steps');
    const c = await request('debug_traceCall', [{ to, data }, 'latest', { tracer: 'callTracer' }]);
    assert.equal(c.to.toLowerCase(), to.toLowerCase());
    const receipt = await request('eth_getTransactionReceipt', [tx]);
    const block = await request('debug_traceBlockByNumber', [receipt.blockNumber, { tracer: 'callTracer' }]);
    assert.ok(Array.isArray(block) && block.length >= 1 && block.some((b: any) => b.txHash === tx), 'the block trace has the transaction');
  }

  test('ethers v6: deploy, 20 transactions each waited for, traces', async () => {
    const req = new FetchRequest(url);
    req.processFunc = async (_r, resp) => {
      if (resp.statusCode !== 200) refusals.push(`ethers: HTTP ${resp.statusCode}`);
      return resp;
    };
    // The one setting that is not ethers' default: ethers answers a repeated identical request (the pending nonce)
    // from a 250 ms cache of its own, so on a chain that mines at once it signs the next transaction with the nonce
    // it just used ("nonce has already been used"). It does so against a bare anvil too; docs/clients.md says so.
    const provider = new JsonRpcProvider(req, undefined, { staticNetwork: true, cacheTimeout: -1 });
    const wallet = new Wallet(ETHERS_KEY, provider);
    const t0 = Date.now();
    const counter = await (await new ContractFactory(abi, bytecode, wallet).deploy(0)).waitForDeployment();
    const address = await counter.getAddress();
    const c = new Contract(address, abi, wallet);
    let last = '';
    for (let i = 0; i < TXS; i++) {
      const tx = await c.increment();
      const receipt = await tx.wait();
      assert.equal(receipt.status, 1, `transaction ${i}`);
      last = tx.hash;
    }
    assert.equal(await c.count(), BigInt(TXS));
    await traces((m, p) => provider.send(m, p), last, address, c.interface.encodeFunctionData('count'));
    console.log(`ethers v6: deployed and sent ${TXS} transactions, each waited for, and traced in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    provider.destroy();
  });

  test('viem: deploy, 20 transactions each waited for, an event watched, traces', async () => {
    const onFetchResponse = (r: Response) => {
      if (r.status !== 200) refusals.push(`viem: HTTP ${r.status}`);
    };
    const chain = defineChain({ id: 1, name: 'embedded', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } });
    const account = privateKeyToAccount(VIEM_KEY);
    const pub = createPublicClient({ chain, transport: http(url, { onFetchResponse }) });
    const wallet = createWalletClient({ account, chain, transport: http(url, { onFetchResponse }) });
    const t0 = Date.now();
    const deployHash = await wallet.deployContract({ abi, bytecode: bytecode as Hex, args: [0n] });
    const address = (await pub.waitForTransactionReceipt({ hash: deployHash })).contractAddress!;
    let last: Hex = '0x';
    for (let i = 0; i < TXS; i++) {
      last = await wallet.writeContract({ address, abi, functionName: 'increment' });
      const receipt = await pub.waitForTransactionReceipt({ hash: last });
      assert.equal(receipt.status, 'success', `transaction ${i}`);
    }
    assert.equal(await pub.readContract({ address, abi, functionName: 'count' }), BigInt(TXS));
    // Event watching through a filter: polled right after the receipt, it reports that receipt's log.
    const filter = await pub.createContractEventFilter({ address, abi, eventName: 'Incremented' });
    await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address, abi, functionName: 'increment' }) });
    const logs: any[] = await pub.getFilterChanges({ filter });
    assert.equal(logs.length, 1);
    assert.equal(logs[0].args.newCount, BigInt(TXS + 1));
    await traces((method, params) => pub.request({ method: method as any, params: params as any }), last, address, '0x06661abd');
    console.log(`viem: deployed and sent ${TXS + 1} transactions, each waited for, watched an event and traced in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });

  test('cast: deploy, 20 transactions each waited for, traces', async () => {
    const t0 = Date.now();
    const deployed = JSON.parse(await cast(['send', '--rpc-url', url, '--private-key', CAST_KEY, '--json', '--create', deployCode]));
    assert.equal(deployed.status, '0x1');
    const address: string = deployed.contractAddress;
    let last = '';
    for (let i = 0; i < TXS; i++) {
      const receipt = JSON.parse(await cast(['send', '--rpc-url', url, '--private-key', CAST_KEY, '--json', address, 'increment()']));
      assert.equal(receipt.status, '0x1', `transaction ${i}`);
      last = receipt.transactionHash;
    }
    assert.equal(await cast(['call', '--rpc-url', url, address, 'count()(uint256)']), String(TXS));
    const rpc = async (method: string, params: unknown[]) => JSON.parse(await cast(['rpc', '--rpc-url', url, '--raw', method, JSON.stringify(params)]));
    await traces(rpc, last, address, '0x06661abd');
    console.log(`cast: deployed and sent ${TXS} transactions, each waited for, and traced in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });

  test('no client call was refused', () => {
    assert.deepEqual(refusals, []);
  });
});
}
