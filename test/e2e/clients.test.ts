/**
 * Real clients against the gateway: ethers v6 (on mainnet, chain id 1) and viem (on testnet, chain id 11155111)
 * deploy a small contract compiled here with solc-js, call it, estimate and send transactions (signed locally and
 * sent raw, or sent with `eth_sendTransaction` from a node account), sign with `eth_sign`, read receipts and logs,
 * use filters, `eth_feeHistory`, and the debug tracers. Each assertion is something a user of the client would notice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ContractFactory,
  HDNodeWallet,
  JsonRpcProvider,
  JsonRpcSigner,
  Network,
  getAddress,
  isError,
  verifyMessage as ethersVerifyMessage,
  type Contract,
  type ContractTransactionResponse,
  type EventLog,
  type Log,
} from 'ethers';
import {
  BaseError,
  ContractFunctionRevertedError,
  RpcRequestError,
  createClient,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  defineChain,
  encodeFunctionData,
  http,
  parseEventLogs,
  recoverMessageAddress,
  toHex,
  verifyMessage as viemVerifyMessage,
  type Abi,
  type Address,
  type Hash,
  type Hex,
} from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { compileCounter as compileCounterFixture } from '../helpers/counter.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const MNEMONIC = 'test test test test test test test test test test test junk';
const REVERT_REASON = 'Counter: step too large';
/** Selector of `Error(string)`, the ABI encoding of a `require` message. */
const ERROR_STRING_SELECTOR = '0x08c379a0';

// The contract, compiled once, in-process, by the solc-js bundled in the npm package (never a downloaded compiler).
type Compiled = { abi: Abi; bytecode: Hex; deployedBytecode: Hex };
const compileCounter = () => compileCounterFixture() as unknown as Compiled;

// ---------------------------------------------------------------------------------------------------------------
// Shared helpers.

interface StructLog { op: string; depth: number; gas: number; gasCost: number; pc: number }
interface StructTrace { failed: boolean; gas: number; returnValue: string; structLogs: StructLog[] }
interface CallFrame { type: string; from: string; to: string; input: string; output?: string; gas: string; gasUsed: string; error?: string; calls?: CallFrame[] }

/** Resolves with the first value `probe` finds, polling until `ms` pass. */
async function eventually<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sameAddress = (a: string | null | undefined, b: string) => !!a && a.toLowerCase() === b.toLowerCase();

let gateway: TestGateway;
let counter: Compiled;

before(async () => {
  counter = compileCounter();
  gateway = await startTestGateway();
});

after(async () => {
  await gateway?.close();
});

// ---------------------------------------------------------------------------------------------------------------

describe('ethers v6 through the gateway (mainnet)', { timeout: 120_000 }, () => {
  let provider: JsonRpcProvider;
  /** Signs locally; its transactions go out with eth_sendRawTransaction. */
  let wallet: HDNodeWallet;
  /** The node's first account; its transactions go out with eth_sendTransaction. */
  let nodeSigner: JsonRpcSigner;
  let contract: Contract;
  let address: string;
  let deployBlock: number;
  /** Every JSON-RPC method ethers sent, in order. */
  const sent: string[] = [];
  let addTx: ContractTransactionResponse;

  before(async () => {
    provider = new JsonRpcProvider(`${gateway.url}/v1/mainnet/${gateway.key}`, undefined, {
      staticNetwork: Network.from(1),
      pollingInterval: 100,
      // ethers answers a repeated identical request (the nonce, the block number) from a 250 ms cache; an
      // automining chain moves faster than that, so consecutive transactions would reuse a nonce.
      cacheTimeout: -1,
    });
    await provider.on('debug', (e: { action: string; payload?: { method: string } | { method: string }[] }) => {
      if (e.action !== 'sendRpcPayload' || !e.payload) return;
      for (const p of Array.isArray(e.payload) ? e.payload : [e.payload]) sent.push(p.method);
    });
    wallet = HDNodeWallet.fromPhrase(MNEMONIC, undefined, "m/44'/60'/0'/0/1").connect(provider);
    nodeSigner = await provider.getSigner(0);
  });

  after(async () => {
    provider?.destroy();
  });

  it('talks to chain id 1 and lists the dev accounts', async () => {
    assert.equal(await provider.send('eth_chainId', []), '0x1');
    const accounts = await provider.listAccounts();
    assert.equal(accounts.length, 10);
    assert.equal(accounts[0].address, HDNodeWallet.fromPhrase(MNEMONIC).address);
    assert.equal(accounts[1].address, wallet.address);
    assert.ok((await provider.getBalance(wallet.address)) > 0n);
  });

  it('deploys the contract with a raw transaction: receipt succeeds and the code is on chain', async () => {
    const factory = new ContractFactory(counter.abi as any, counter.bytecode, wallet);
    contract = (await factory.deploy(5n)) as Contract;
    await contract.waitForDeployment();
    address = await contract.getAddress();
    const receipt = await contract.deploymentTransaction()!.wait();
    assert.ok(receipt);
    assert.equal(receipt.status, 1);
    assert.equal(receipt.contractAddress, address);
    assert.equal(receipt.from, wallet.address);
    deployBlock = receipt.blockNumber;
    assert.equal(await provider.getCode(address), counter.deployedBytecode);
    assert.ok(sent.includes('eth_sendRawTransaction'));
  });

  it('reads the contract with eth_call', async () => {
    assert.equal(await contract.count(), 5n);
    assert.equal(await contract.MAX_STEP(), 100n);
  });

  it('estimates a transaction above 21000 gas and sends it (raw) with exactly that limit', async () => {
    const estimate: bigint = await contract.add.estimateGas(3n);
    assert.ok(estimate > 21_000n, `estimate ${estimate}`);
    addTx = await contract.add(3n, { gasLimit: estimate });
    assert.equal(addTx.gasLimit, estimate);
    const receipt = await addTx.wait();
    assert.ok(receipt);
    assert.equal(receipt.status, 1);
    assert.ok(receipt.gasUsed <= estimate);
    assert.equal(await contract.count(), 8n);

    const [log] = receipt.logs;
    assert.ok(log && 'args' in log, 'the receipt log decodes against the ABI');
    const ev = log as EventLog;
    assert.equal(ev.eventName, 'Incremented');
    assert.equal(ev.args.sender, wallet.address);
    assert.equal(ev.args.step, 3n);
    assert.equal(ev.args.newCount, 8n);
  });

  it('sends a transaction with eth_sendTransaction from a node account (JsonRpcSigner)', async () => {
    assert.equal(nodeSigner.address, (await provider.listAccounts())[0].address);
    const before = sent.length;
    const tx = await (contract.connect(nodeSigner) as Contract).increment();
    assert.ok(sent.slice(before).includes('eth_sendTransaction'));
    assert.equal(tx.from, nodeSigner.address);
    const receipt = await tx.wait();
    assert.ok(receipt);
    assert.equal(receipt.status, 1);
    assert.equal(await contract.count(), 9n);
    const parsed = contract.interface.parseLog(receipt.logs[0]);
    assert.equal(parsed?.name, 'Incremented');
    assert.equal(parsed?.args.sender, nodeSigner.address);
    assert.equal(parsed?.args.newCount, 9n);
  });

  it('signs with eth_sign (the EIP-191 personal message) and the signature recovers to the account', async () => {
    const message = 'hello from ethers through nodegate';
    const signature = await nodeSigner._legacySignMessage(message); // eth_sign
    assert.equal(ethersVerifyMessage(message, signature), nodeSigner.address);
    // The same, byte for byte, as the account signing locally.
    const local = HDNodeWallet.fromPhrase(MNEMONIC);
    assert.equal(signature, await local.signMessage(message));
    // signMessage uses personal_sign, which is not an allowed method: the gateway answers -32601.
    await assert.rejects(nodeSigner.signMessage(message), (e: any) => {
      assert.equal(e.error?.code ?? e.info?.error?.code, -32601, e.message);
      return true;
    });
  });

  it('reads logs with eth_getLogs, decoded to the event arguments', async () => {
    const events = (await contract.queryFilter(contract.filters.Incremented(), deployBlock, 'latest')) as EventLog[];
    assert.deepEqual(
      events.map((e) => [e.args.sender, e.args.step, e.args.newCount]),
      [[wallet.address, 3n, 8n], [nodeSigner.address, 1n, 9n]],
    );
    // Filtered by the indexed sender.
    const mine = await contract.queryFilter(contract.filters.Incremented(wallet.address), deployBlock);
    assert.equal(mine.length, 1);
    assert.equal(mine[0].transactionHash, addTx.hash);
    const raw: Log[] = await provider.getLogs({ address, fromBlock: deployBlock, toBlock: 'latest' });
    assert.equal(raw.length, 2);
    assert.ok(sent.includes('eth_getLogs'));
  });

  it('delivers events to contract.on through eth_newFilter and eth_getFilterChanges', async () => {
    const seen: { sender: string; step: bigint; newCount: bigint }[] = [];
    const listener = (sender: string, step: bigint, newCount: bigint) => {
      seen.push({ sender, step, newCount });
    };
    const before = sent.length;
    await contract.on('Incremented', listener);
    // The first eth_getFilterChanges goes out once eth_newFilter has answered: the filter is installed before
    // the transaction, so exactly the new event is delivered.
    await eventually('the filter', () => (sent.slice(before).includes('eth_getFilterChanges') ? true : undefined));
    assert.ok(sent.slice(before).includes('eth_newFilter'));
    const tx = await contract.add(7n);
    await tx.wait();
    await eventually('the Incremented event', () => (seen.length > 0 ? true : undefined));
    assert.deepEqual(seen, [{ sender: wallet.address, step: 7n, newCount: 16n }]);
    await contract.off('Incremented', listener);
    await eventually('eth_uninstallFilter', () => (sent.includes('eth_uninstallFilter') ? true : undefined));
  });

  it('polls a block filter (eth_newBlockFilter) for the blocks of new transactions', async () => {
    const id: string = await provider.send('eth_newBlockFilter', []);
    const receipt = await (await contract.increment()).wait();
    assert.ok(receipt);
    const hashes: string[] = await provider.send('eth_getFilterChanges', [id]);
    assert.ok(hashes.includes(receipt.blockHash), 'the new block is reported');
    assert.equal(await provider.send('eth_uninstallFilter', [id]), true);
  });

  it('surfaces a revert reason from eth_call and eth_estimateGas', async () => {
    await assert.rejects(contract.add.staticCall(1000n), (e: any) => {
      assert.ok(isError(e, 'CALL_EXCEPTION'), e.message);
      assert.equal(e.reason, REVERT_REASON);
      assert.equal(e.revert?.name, 'Error');
      assert.ok(String(e.data).startsWith(ERROR_STRING_SELECTOR));
      return true;
    });
    // The node's error passed through the gateway: code 3 with the ABI-encoded Error(string) as data.
    const data = contract.interface.encodeFunctionData('add', [1000n]);
    await assert.rejects(provider.call({ to: address, data }), (e: any) => {
      assert.ok(isError(e, 'CALL_EXCEPTION'), e.message);
      assert.equal(e.reason, REVERT_REASON);
      assert.equal(e.info?.error?.code, 3);
      assert.match(e.info?.error?.message, /execution reverted/);
      assert.ok(String(e.info?.error?.data).startsWith(ERROR_STRING_SELECTOR));
      return true;
    });
    await assert.rejects(contract.add.estimateGas(1000n), (e: any) => {
      assert.ok(isError(e, 'CALL_EXCEPTION'), e.message);
      assert.equal(e.reason, REVERT_REASON);
      return true;
    });
    assert.equal(await contract.count(), 17n, 'nothing changed');
  });

  it('reads fee data and eth_feeHistory with the requested number of blocks', async () => {
    const fee = await provider.getFeeData();
    assert.ok(fee.gasPrice !== null && fee.gasPrice > 0n);
    assert.ok(fee.maxFeePerGas !== null && fee.maxPriorityFeePerGas !== null);
    const history = await provider.send('eth_feeHistory', ['0x3', 'latest', [25, 75]]);
    assert.equal(history.gasUsedRatio.length, 3);
    assert.equal(history.baseFeePerGas.length, 4, 'one more base fee than blocks: the next block');
    assert.equal(history.reward.length, 3);
    for (const r of history.reward) assert.equal(r.length, 2);
    const latest = Number(await provider.send('eth_blockNumber', []));
    assert.equal(Number(history.oldestBlock), latest - 2);
  });

  it('traces a transaction with the default struct logger', async () => {
    const trace: StructTrace = await provider.send('debug_traceTransaction', [addTx.hash]);
    assert.equal(trace.failed, false);
    assert.ok(trace.gas > 21_000);
    assert.ok(trace.structLogs.length > 0);
    assert.ok(trace.structLogs.some((l) => l.op === 'SSTORE'), 'the counter is stored');
    assert.ok(trace.structLogs.some((l) => l.op === 'LOG2'), 'the event is logged');
  });

  it('traces a transaction with callTracer', async () => {
    const frame: CallFrame = await provider.send('debug_traceTransaction', [addTx.hash, { tracer: 'callTracer' }]);
    assert.equal(frame.type, 'CALL');
    assert.equal(getAddress(frame.to), address);
    assert.equal(getAddress(frame.from), wallet.address);
    assert.equal(frame.input, contract.interface.encodeFunctionData('add', [3n]));
    assert.equal(frame.error, undefined);
  });

  it('traces a call with debug_traceCall without sending it', async () => {
    const data = contract.interface.encodeFunctionData('add', [2n]);
    const countBefore: bigint = await contract.count();
    const blockBefore = await provider.send('eth_blockNumber', []);
    const frame: CallFrame = await provider.send('debug_traceCall', [{ from: wallet.address, to: address, data }, 'latest', { tracer: 'callTracer' }]);
    assert.equal(frame.type, 'CALL');
    assert.equal(getAddress(frame.to), address);
    assert.equal(frame.input, data);
    const structTrace: StructTrace = await provider.send('debug_traceCall', [{ from: wallet.address, to: address, data }, 'latest']);
    assert.ok(structTrace.structLogs.some((l) => l.op === 'SSTORE'));
    // A reverting call traces too, with the failure in the frame.
    const bad = contract.interface.encodeFunctionData('add', [1000n]);
    const failed: CallFrame = await provider.send('debug_traceCall', [{ from: wallet.address, to: address, data: bad }, 'latest', { tracer: 'callTracer' }]);
    assert.ok(failed.error, 'the reverted frame carries an error');
    assert.equal(await contract.count(), countBefore, 'the traced call changed nothing');
    assert.equal(await provider.send('eth_blockNumber', []), blockBefore, 'and mined nothing');
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('viem through the gateway (testnet)', { timeout: 120_000 }, () => {
  const chain = defineChain({
    id: 11155111,
    name: 'Nodegate testnet',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: ['http://127.0.0.1/'] } },
  });
  /** Every JSON-RPC method viem sent, in order. */
  const sent: string[] = [];
  /** Signs locally; its transactions go out with eth_sendRawTransaction. */
  const local = mnemonicToAccount(MNEMONIC, { addressIndex: 2 });
  let endpoint: string;
  let transport: ReturnType<typeof http>;
  let publicClient: ReturnType<typeof makePublic>;
  let walletClient: ReturnType<typeof makeWallet>;
  /** No account of its own: the node's accounts, eth_sendTransaction. */
  let nodeWallet: ReturnType<typeof makeNodeWallet>;
  /** A node account; its transactions go out with eth_sendTransaction. */
  let nodeAccount: Address;
  let address: Address;
  let deployBlock: bigint;
  let addHash: Hash;

  const makePublic = () => createPublicClient({ chain, transport, pollingInterval: 100 });
  const makeWallet = () => createWalletClient({ chain, transport, account: local, pollingInterval: 100 });
  const makeNodeWallet = () => createWalletClient({ chain, transport, pollingInterval: 100 });
  /** For the debug_* methods, which viem's typed schemas do not list. */
  const raw = <T>(method: string, params: unknown[]) => createClient({ chain, transport }).request({ method, params } as never) as Promise<T>;
  const abi = () => counter.abi;

  before(async () => {
    endpoint = `${gateway.url}/v1/testnet/${gateway.key}`;
    transport = http(endpoint, {
      retryCount: 0,
      onFetchRequest: (_req, init) => {
        const body = JSON.parse(String(init.body));
        for (const p of Array.isArray(body) ? body : [body]) sent.push(p.method);
      },
    });
    publicClient = makePublic();
    walletClient = makeWallet();
    nodeWallet = makeNodeWallet();
    const accounts = await nodeWallet.getAddresses();
    nodeAccount = accounts[3];
  });

  it('talks to chain id 11155111 and lists the dev accounts', async () => {
    assert.equal(await publicClient.getChainId(), 11155111);
    const accounts = await nodeWallet.getAddresses(); // eth_accounts
    assert.equal(accounts.length, 10);
    assert.equal(getAddress(accounts[2]), local.address);
    assert.ok((await publicClient.getBalance({ address: local.address })) > 0n);
  });

  it('deploys the contract with a raw transaction: receipt succeeds and the code is on chain', async () => {
    const hash = await walletClient.deployContract({ abi: abi(), bytecode: counter.bytecode, args: [5n] });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, 'success');
    assert.ok(receipt.contractAddress);
    address = receipt.contractAddress;
    deployBlock = receipt.blockNumber;
    assert.equal(await publicClient.getCode({ address }), counter.deployedBytecode);
    assert.ok(sent.includes('eth_sendRawTransaction'));
  });

  it('reads the contract with eth_call', async () => {
    assert.equal(await publicClient.readContract({ address, abi: abi(), functionName: 'count' }), 5n);
  });

  it('reads with state and block overrides (eth_call and eth_estimateGas take them after the block, as geth does)', async () => {
    // `count` is the contract's first storage slot.
    const stateOverride = [{ address, stateDiff: [{ slot: toHex(0n, { size: 32 }), value: toHex(1234n, { size: 32 }) }] }];
    assert.equal(await publicClient.readContract({ address, abi: abi(), functionName: 'count', stateOverride }), 1234n);
    const gas = await publicClient.estimateContractGas({ address, abi: abi(), functionName: 'add', args: [1n], account: local, stateOverride });
    assert.ok(gas > 21_000n);
    // Code returning the block number (NUMBER, MSTORE, RETURN), run in a block whose number is overridden.
    const probe = '0x000000000000000000000000000000000000bEEF';
    const { data } = await publicClient.call({ to: probe, stateOverride: [{ address: probe, code: '0x4360005260206000f3' }], blockOverrides: { number: 12345n } });
    assert.equal(BigInt(data!), 12345n);
    assert.equal(await publicClient.readContract({ address, abi: abi(), functionName: 'count' }), 5n, 'the real state is untouched');
  });

  it('estimates a transaction above 21000 gas and sends it (raw) with exactly that limit', async () => {
    const gas = await publicClient.estimateContractGas({ address, abi: abi(), functionName: 'add', args: [3n], account: local });
    assert.ok(gas > 21_000n, `estimate ${gas}`);
    addHash = await walletClient.writeContract({ address, abi: abi(), functionName: 'add', args: [3n], gas });
    const receipt = await publicClient.waitForTransactionReceipt({ hash: addHash });
    assert.equal(receipt.status, 'success');
    assert.ok(receipt.gasUsed <= gas);
    assert.equal((await publicClient.getTransaction({ hash: addHash })).gas, gas);
    assert.equal(await publicClient.readContract({ address, abi: abi(), functionName: 'count' }), 8n);
    const [ev] = parseEventLogs({ abi: abi(), logs: receipt.logs, eventName: 'Incremented' }) as any[];
    assert.equal(ev.eventName, 'Incremented');
    assert.deepEqual(ev.args, { sender: local.address, step: 3n, newCount: 8n });
  });

  it('sends a transaction with eth_sendTransaction from a node account (json-rpc account)', async () => {
    const before = sent.length;
    const hash = await nodeWallet.writeContract({ account: nodeAccount, address, abi: abi(), functionName: 'increment' });
    assert.ok(sent.slice(before).includes('eth_sendTransaction'));
    assert.ok(!sent.slice(before).includes('eth_sendRawTransaction'));
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, 'success');
    assert.ok(sameAddress(receipt.from, nodeAccount));
    assert.equal(await publicClient.readContract({ address, abi: abi(), functionName: 'count' }), 9n);
    const decoded = decodeEventLog({ abi: abi(), data: receipt.logs[0].data, topics: receipt.logs[0].topics }) as any;
    assert.equal(decoded.eventName, 'Incremented');
    assert.ok(sameAddress(decoded.args.sender, nodeAccount));
    assert.equal(decoded.args.newCount, 9n);
  });

  it('signs with eth_sign (the EIP-191 personal message) and the signature recovers to the account', async () => {
    const message = 'hello from viem through nodegate';
    const signature = await nodeWallet.request({ method: 'eth_sign', params: [nodeAccount, toHex(message)] });
    assert.equal(await viemVerifyMessage({ address: nodeAccount, message, signature }), true);
    assert.ok(sameAddress(await recoverMessageAddress({ message, signature }), nodeAccount));
    // viem's signMessage for a json-rpc account uses personal_sign, which is not an allowed method: -32601.
    await assert.rejects(nodeWallet.signMessage({ account: nodeAccount, message }), (e: any) => {
      assert.ok(e instanceof BaseError);
      assert.ok(e.walk((c: any) => c?.code === -32601), e.message);
      return true;
    });
  });

  it('reads logs with eth_getLogs, decoded to the event arguments', async () => {
    const events = await publicClient.getContractEvents({ address, abi: abi(), eventName: 'Incremented', fromBlock: deployBlock, toBlock: 'latest' }) as any[];
    assert.deepEqual(
      events.map((e) => [getAddress(e.args.sender), e.args.step, e.args.newCount]),
      [[local.address, 3n, 8n], [getAddress(nodeAccount), 1n, 9n]],
    );
    const mine = await publicClient.getContractEvents({ address, abi: abi(), eventName: 'Incremented', args: { sender: local.address }, fromBlock: deployBlock }) as any[];
    assert.equal(mine.length, 1);
    assert.equal(mine[0].transactionHash, addHash);
    assert.ok(sent.includes('eth_getLogs'));
  });

  it('polls a contract event filter (eth_newFilter, eth_getFilterChanges)', async () => {
    const filter = await publicClient.createContractEventFilter({ address, abi: abi(), eventName: 'Incremented' });
    const hash = await walletClient.writeContract({ address, abi: abi(), functionName: 'add', args: [4n] });
    await publicClient.waitForTransactionReceipt({ hash });
    const changes = await publicClient.getFilterChanges({ filter }) as any[];
    assert.equal(changes.length, 1);
    assert.equal(changes[0].eventName, 'Incremented');
    assert.deepEqual(changes[0].args, { sender: local.address, step: 4n, newCount: 13n });
    assert.deepEqual(await publicClient.getFilterChanges({ filter }), [], 'changes are reported once');
    const all = await publicClient.getFilterLogs({ filter }) as any[];
    assert.ok(all.some((l) => l.transactionHash === hash));
    assert.equal(await publicClient.uninstallFilter({ filter }), true);
  });

  it('polls a block filter (createBlockFilter) for the blocks of new transactions', async () => {
    const filter = await publicClient.createBlockFilter();
    const hash = await walletClient.writeContract({ address, abi: abi(), functionName: 'increment' });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    const hashes = await publicClient.getFilterChanges({ filter });
    assert.ok(hashes.includes(receipt.blockHash));
    assert.equal(await publicClient.uninstallFilter({ filter }), true);
  });

  it('delivers events to watchContractEvent through a filter', async () => {
    const before = sent.length;
    const seen: any[] = [];
    const unwatch = publicClient.watchContractEvent({
      address, abi: abi(), eventName: 'Incremented', poll: true, pollingInterval: 100,
      onLogs: (logs) => { seen.push(...logs); },
      onError: (e) => { seen.push(e); },
    });
    try {
      // viem polls eth_getFilterChanges once eth_newFilter has answered: the filter is in place before the transaction.
      await eventually('the filter', () => (sent.slice(before).includes('eth_getFilterChanges') ? true : undefined));
      assert.ok(sent.slice(before).includes('eth_newFilter'));
      const hash = await walletClient.writeContract({ address, abi: abi(), functionName: 'add', args: [6n] });
      await publicClient.waitForTransactionReceipt({ hash });
      await eventually('the Incremented event', () => (seen.length > 0 ? true : undefined));
      assert.equal(seen.length, 1, String(seen[0]));
      assert.deepEqual(seen[0].args, { sender: local.address, step: 6n, newCount: 20n });
      assert.ok(!sent.slice(before).includes('eth_getLogs'), 'the filter was used, not the getLogs fallback');
    } finally {
      unwatch();
    }
  });

  it('surfaces a revert reason from eth_call and eth_estimateGas', async () => {
    await assert.rejects(
      publicClient.simulateContract({ account: local, address, abi: abi(), functionName: 'add', args: [1000n] }),
      (e: any) => {
        assert.ok(e instanceof BaseError);
        const revert = e.walk((c) => c instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
        assert.ok(revert, e.message);
        assert.equal(revert.reason, REVERT_REASON);
        return true;
      },
    );
    await assert.rejects(
      publicClient.estimateContractGas({ account: local, address, abi: abi(), functionName: 'add', args: [1000n] }),
      (e: any) => {
        const revert = (e as BaseError).walk((c) => c instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
        assert.ok(revert, e.message);
        assert.equal(revert.reason, REVERT_REASON);
        return true;
      },
    );
    // The node's error passes through the gateway untouched: code 3 with the ABI-encoded Error(string) as data.
    const data = encodeFunctionData({ abi: abi(), functionName: 'add', args: [1000n] });
    await assert.rejects(publicClient.request({ method: 'eth_call', params: [{ to: address, data }, 'latest'] }), (e: any) => {
      const rpc = (e as BaseError).walk((c) => c instanceof RpcRequestError) as RpcRequestError | null;
      assert.ok(rpc, e.message);
      assert.equal(rpc.code, 3);
      assert.ok(String(rpc.data).startsWith(ERROR_STRING_SELECTOR));
      assert.match(rpc.details, /Counter: step too large/);
      return true;
    });
    assert.equal(await publicClient.readContract({ address, abi: abi(), functionName: 'count' }), 20n, 'nothing changed');
  });

  it('reads fees and eth_feeHistory with the requested number of blocks', async () => {
    const fees = await publicClient.estimateFeesPerGas();
    assert.ok(fees.maxFeePerGas > 0n);
    const history = await publicClient.getFeeHistory({ blockCount: 4, rewardPercentiles: [25, 75] });
    assert.equal(history.gasUsedRatio.length, 4);
    assert.equal(history.baseFeePerGas.length, 5, 'one more base fee than blocks: the next block');
    assert.equal(history.reward?.length, 4);
    for (const r of history.reward ?? []) assert.equal(r.length, 2);
    assert.equal(history.oldestBlock, (await publicClient.getBlockNumber()) - 3n);
  });

  it('traces a transaction with the default struct logger and with callTracer', async () => {
    const trace = await raw<StructTrace>('debug_traceTransaction', [addHash]);
    assert.equal(trace.failed, false);
    assert.ok(trace.structLogs.length > 0);
    assert.ok(trace.structLogs.some((l) => l.op === 'SSTORE'));
    const frame = await raw<CallFrame>('debug_traceTransaction', [addHash, { tracer: 'callTracer' }]);
    assert.equal(frame.type, 'CALL');
    assert.ok(sameAddress(frame.to, address));
    assert.ok(sameAddress(frame.from, local.address));
    assert.equal(frame.input, encodeFunctionData({ abi: abi(), functionName: 'add', args: [3n] }));
  });

  it('traces a call with debug_traceCall without sending it', async () => {
    const data = encodeFunctionData({ abi: abi(), functionName: 'increment' });
    const blockBefore = await publicClient.getBlockNumber();
    const frame = await raw<CallFrame>('debug_traceCall', [{ from: local.address, to: address, data }, 'latest', { tracer: 'callTracer' }]);
    assert.equal(frame.type, 'CALL');
    assert.ok(sameAddress(frame.to, address));
    assert.equal(frame.error, undefined);
    const trace = await raw<StructTrace>('debug_traceCall', [{ from: local.address, to: address, input: data }, 'latest', {}]);
    assert.ok(trace.structLogs.some((l) => l.op === 'SSTORE'));
    assert.equal(await publicClient.readContract({ address, abi: abi(), functionName: 'count' }), 20n, 'the traced call changed nothing');
    assert.equal(await publicClient.getBlockNumber(), blockBefore, 'and mined nothing');
  });
});
