import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import { HDNodeWallet, Interface, Transaction, getBytes, id, verifyMessage } from 'ethers';
import { ALLOWED_METHODS } from '../../src/methods/allowed.ts';
import { methodSchemas } from '../../src/methods/schemas/method-schemas.ts';
import { compileCounter, counterInitCode } from '../helpers/counter.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * docs/decisions.md §4: every one of the 49 allowed methods answers a well-formed call on the embedded default (anvil)
 * with a result of its documented shape (the method's result schema) and the semantics geth documents; any
 * other name is -32601. One test per method, each through the wire.
 */
describe('the 49 allowed methods on the embedded default', () => {
  let g: TestGateway;
  const counter = compileCounter();
  const abi = new Interface(counter.abi);
  const INCREMENT = abi.encodeFunctionData('increment');
  const COUNT = abi.encodeFunctionData('count');
  const INCREMENTED = id('Incremented(address,uint256,uint256)');
  const ONE_ETHER = 10n ** 18n;
  const UNKNOWN_HASH = '0x' + '11'.repeat(32);

  /** What before() set up: a value transfer, a deployed Counter(5), and an increment() that logged. */
  const s = {
    from: '', to: '', mnemonic: '',
    /** The block before the transfer, for historical state. */
    preBlock: '',
    transferHash: '', transferReceipt: {} as any,
    deployHash: '', counter: '',
    incHash: '', incReceipt: {} as any,
  };

  const ajv = new Ajv({ strict: false, allErrors: true });
  const validators = new Map<string, ValidateFunction>();
  const covered = new Set<string>();

  /** One call through the wire: HTTP 200, the id echoed, no error, and a result of the method's documented shape. */
  async function ok<T = any>(method: string, params: unknown[] = [], network = 'mainnet'): Promise<T> {
    const r = await g.rpc({ jsonrpc: '2.0', id: 42, method, params }, { network });
    assert.equal(r.status, 200, `${method}: HTTP ${r.status} ${r.text}`);
    assert.equal(r.body?.jsonrpc, '2.0');
    assert.equal(r.body.id, 42);
    assert.equal(r.body.error, undefined, `${method}: ${JSON.stringify(r.body.error)}`);
    assert.ok('result' in r.body, `${method}: no result in ${r.text}`);
    let validate = validators.get(method);
    if (!validate) validators.set(method, (validate = ajv.compile(methodSchemas[method].result)));
    assert.ok(validate(r.body.result), `${method}: result does not match its schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(r.body.result).slice(0, 2000)}`);
    return r.body.result;
  }

  /** A JSON-RPC error answer (HTTP 200), returned for its code and message. */
  async function fails(method: string, params: unknown[] = []): Promise<{ code: number; message: string }> {
    const r = await g.rpc({ jsonrpc: '2.0', id: 7, method, params });
    assert.equal(r.status, 200, `${method}: HTTP ${r.status} ${r.text}`);
    assert.equal(r.body.id, 7);
    assert.ok(r.body.error, `${method}: expected an error, got ${r.text.slice(0, 300)}`);
    return r.body.error;
  }

  /** Registers the test of one allowed method; the last test checks that all 49 have one. */
  function method(name: string, title: string, fn: () => Promise<void>) {
    covered.add(name);
    test(`${name} ${title}`, fn);
  }

  const big = (q: string) => BigInt(q);
  const word = (n: number | bigint) => '0x' + BigInt(n).toString(16).padStart(64, '0');
  const same = (a: string, b: string) => assert.equal(a.toLowerCase(), b.toLowerCase());

  /**
   * Waits for a transaction's receipt, as a client does: anvil answers eth_sendTransaction when the transaction
   * is in its pool and automine mines it a few milliseconds later (so does geth), so the receipt can be null at first.
   */
  async function receiptOf(hash: string): Promise<any> {
    for (const deadline = Date.now() + 5000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 10))) {
      const receipt = await g.call('eth_getTransactionReceipt', [hash]);
      if (receipt) return receipt;
    }
    assert.fail(`no receipt for ${hash} within 5 s`);
  }

  async function send(tx: Record<string, unknown>): Promise<{ hash: string; receipt: any }> {
    const hash = await g.call<string>('eth_sendTransaction', [{ from: s.from, ...tx }]);
    const receipt = await receiptOf(hash);
    assert.equal(receipt.status, '0x1');
    return { hash, receipt };
  }

  before(async () => {
    g = await startTestGateway();
    s.mnemonic = g.gw.config.embedded.mnemonic;
    [s.from, s.to] = await g.call<string[]>('eth_accounts');
    s.preBlock = await g.call('eth_blockNumber');
    const transfer = await send({ to: s.to, value: '0x' + ONE_ETHER.toString(16) });
    s.transferHash = transfer.hash;
    s.transferReceipt = transfer.receipt;
    const deploy = await send({ data: counterInitCode(5) });
    s.deployHash = deploy.hash;
    s.counter = deploy.receipt.contractAddress;
    const inc = await send({ to: s.counter, data: INCREMENT });
    s.incHash = inc.hash;
    s.incReceipt = inc.receipt;
    assert.equal(s.incReceipt.logs.length, 1);
  });

  after(async () => {
    await g?.close();
  });

  // ---- web3_, net_ ----

  method('web3_clientVersion', 'names the node', async () => {
    const v = await ok<string>('web3_clientVersion');
    assert.match(v, /^anvil\/v\d/);
  });

  method('web3_sha3', 'is keccak-256 of the data', async () => {
    assert.equal(await ok('web3_sha3', ['0x68656c6c6f20776f726c64']), '0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad');
  });

  method('net_version', 'is the chain id in decimal, per network', async () => {
    assert.equal(await ok('net_version'), '1');
    assert.equal(await ok('net_version', [], 'testnet'), '11155111');
  });

  method('net_listening', 'is true', async () => {
    assert.equal(await ok('net_listening'), true);
  });

  method('net_peerCount', 'is 0x0 (an embedded chain has no peers)', async () => {
    assert.equal(await ok('net_peerCount'), '0x0');
  });

  // ---- node state ----

  method('eth_protocolVersion', 'is a QUANTITY, not a JSON number', async () => {
    const v = await ok('eth_protocolVersion');
    assert.equal(typeof v, 'string');
  });

  method('eth_syncing', 'is false', async () => {
    assert.equal(await ok('eth_syncing'), false);
  });

  method('eth_coinbase', 'is an address', async () => {
    assert.match(await ok<string>('eth_coinbase'), /^0x[0-9a-fA-F]{40}$/);
  });

  method('eth_mining', 'is a boolean, true while automine is on', async () => {
    const v = await ok('eth_mining');
    assert.equal(typeof v, 'boolean');
    assert.equal(v, true);
  });

  method('eth_hashrate', 'is 0x0', async () => {
    assert.equal(await ok('eth_hashrate'), '0x0');
  });

  method('eth_gasPrice', 'is a positive QUANTITY', async () => {
    assert.ok(big(await ok('eth_gasPrice')) > 0n);
  });

  method('eth_maxPriorityFeePerGas', 'is a positive QUANTITY', async () => {
    assert.ok(big(await ok('eth_maxPriorityFeePerGas')) > 0n);
  });

  method('eth_chainId', 'is 0x1 on mainnet and 0xaa36a7 on testnet and its alias devnet', async () => {
    assert.equal(await ok('eth_chainId'), '0x1');
    assert.equal(await ok('eth_chainId', [], 'testnet'), '0xaa36a7');
    assert.equal(await ok('eth_chainId', [], 'devnet'), '0xaa36a7');
  });

  method('eth_accounts', "lists the node's development accounts, derived from the configured mnemonic", async () => {
    const accounts = await ok<string[]>('eth_accounts');
    assert.equal(accounts.length, 10);
    same(accounts[0], HDNodeWallet.fromPhrase(s.mnemonic, undefined, "m/44'/60'/0'/0/0").address);
  });

  method('eth_blockNumber', 'is the number of the latest block, past the set-up transactions', async () => {
    const n = await ok<string>('eth_blockNumber');
    assert.ok(big(n) >= big(s.incReceipt.blockNumber));
    const latest = await g.call('eth_getBlockByNumber', ['latest', false]);
    assert.ok(big(latest.number) >= big(n));
  });

  // ---- state ----

  method('eth_getBalance', "shows the sender's balance decreased, the recipient's increased, and defaults to latest", async () => {
    const before = big(await ok('eth_getBalance', [s.from, s.preBlock]));
    const after = big(await ok('eth_getBalance', [s.from, s.transferReceipt.blockNumber]));
    assert.ok(after < before - ONE_ETHER, 'the sender paid the value and the fee');
    const toBefore = big(await ok('eth_getBalance', [s.to, s.preBlock]));
    const toAfter = big(await ok('eth_getBalance', [s.to, s.transferReceipt.blockNumber]));
    assert.equal(toAfter - toBefore, ONE_ETHER);
    // No block parameter: latest, as in geth.
    assert.equal(await ok('eth_getBalance', [s.to]), await ok('eth_getBalance', [s.to, 'latest']));
  });

  method('eth_getStorageAt', "reads the Counter's count slot", async () => {
    assert.equal(await ok('eth_getStorageAt', [s.counter, '0x0', s.incReceipt.blockNumber]), word(6));
    assert.equal(await ok('eth_getStorageAt', [s.counter, '0x0', s.transferReceipt.blockNumber]), word(0));
  });

  method('eth_getTransactionCount', 'counts the sender\'s transactions', async () => {
    assert.equal(await ok('eth_getTransactionCount', [s.from, s.preBlock]), '0x0');
    assert.equal(await ok('eth_getTransactionCount', [s.from, s.incReceipt.blockNumber]), '0x3');
    assert.ok(big(await ok('eth_getTransactionCount', [s.from])) >= 3n);
  });

  method('eth_getCode', "is the Counter's runtime code, and 0x for an account", async () => {
    assert.equal(await ok('eth_getCode', [s.counter, 'latest']), counter.deployedBytecode);
    assert.equal(await ok('eth_getCode', [s.from, 'latest']), '0x');
  });

  method('eth_call', 'reads count() at a past block and at latest', async () => {
    assert.equal(await ok('eth_call', [{ to: s.counter, data: COUNT }, s.incReceipt.blockNumber]), word(6));
    assert.ok(big(await ok('eth_call', [{ to: s.counter, input: COUNT }, 'latest'])) >= 6n);
  });

  method('eth_estimateGas', 'is 21000 for a plain transfer and more for increment()', async () => {
    assert.equal(await ok('eth_estimateGas', [{ from: s.from, to: s.to, value: '0x1' }]), '0x5208');
    assert.ok(big(await ok('eth_estimateGas', [{ from: s.from, to: s.counter, data: INCREMENT }])) > 21000n);
  });

  method('eth_feeHistory', 'has a base fee per block plus the next, and the asked percentiles', async () => {
    const h = await ok<any>('eth_feeHistory', ['0x2', 'latest', [25, 75]]);
    assert.equal(h.baseFeePerGas.length, 3);
    assert.equal(h.gasUsedRatio.length, 2);
    assert.equal(h.reward.length, 2);
    assert.equal(h.reward[0].length, 2);
  });

  // ---- sending ----

  method('eth_sign', 'signs with a development account, recoverable to it', async () => {
    const sig = await ok<string>('eth_sign', [s.from, '0xdeadbeef']);
    same(verifyMessage(getBytes('0xdeadbeef'), sig), s.from);
  });

  method('eth_sendTransaction', 'sends from a development account and the transaction is mined', async () => {
    const hash = await ok<string>('eth_sendTransaction', [{ from: s.from, to: s.to, value: '0x2' }]);
    const receipt = await receiptOf(hash);
    assert.equal(receipt.status, '0x1');
    same(receipt.from, s.from);
  });

  method('eth_sendRawTransaction', 'accepts a locally signed transaction and answers its hash', async () => {
    const wallet = HDNodeWallet.fromPhrase(s.mnemonic, undefined, "m/44'/60'/0'/0/2");
    const nonce = Number(await g.call('eth_getTransactionCount', [wallet.address, 'pending']));
    const gasPrice = big(await g.call('eth_gasPrice'));
    const signed = await wallet.signTransaction({
      type: 2, chainId: 1, nonce, to: s.to, value: 3n, gasLimit: 21000n,
      maxFeePerGas: gasPrice * 2n, maxPriorityFeePerGas: 1n,
    });
    const hash = await ok<string>('eth_sendRawTransaction', [signed]);
    assert.equal(hash, Transaction.from(signed).hash);
    const receipt = await receiptOf(hash);
    assert.equal(receipt.status, '0x1');
    same(receipt.from, wallet.address);
  });

  // ---- blocks and transactions ----

  method('eth_getBlockByHash', 'finds the block of a transaction, with hashes', async () => {
    const b = await ok<any>('eth_getBlockByHash', [s.incReceipt.blockHash, false]);
    assert.equal(b.hash, s.incReceipt.blockHash);
    assert.equal(b.number, s.incReceipt.blockNumber);
    assert.deepEqual(b.transactions, [s.incHash]);
    assert.equal(await ok('eth_getBlockByHash', [UNKNOWN_HASH, false]), null);
  });

  method('eth_getBlockByNumber', 'finds the block of a transaction, with full transactions', async () => {
    const b = await ok<any>('eth_getBlockByNumber', [s.incReceipt.blockNumber, true]);
    assert.equal(b.hash, s.incReceipt.blockHash);
    assert.equal(b.transactions.length, 1);
    assert.equal(b.transactions[0].hash, s.incHash);
    assert.equal(b.transactions[0].input, INCREMENT);
    const latest = await ok<any>('eth_getBlockByNumber', ['latest', false]);
    assert.ok(big(latest.number) >= big(s.incReceipt.blockNumber));
    assert.equal(await ok('eth_getBlockByNumber', ['0xffffff', false]), null);
  });

  method('eth_getBlockTransactionCountByHash', 'is 0x1 for a block with one transaction', async () => {
    assert.equal(await ok('eth_getBlockTransactionCountByHash', [s.incReceipt.blockHash]), '0x1');
  });

  method('eth_getBlockTransactionCountByNumber', 'is 0x1 for a block with one transaction, 0x0 for genesis', async () => {
    assert.equal(await ok('eth_getBlockTransactionCountByNumber', [s.incReceipt.blockNumber]), '0x1');
    assert.equal(await ok('eth_getBlockTransactionCountByNumber', ['0x0']), '0x0');
  });

  method('eth_getUncleCountByBlockHash', 'is 0x0', async () => {
    assert.equal(await ok('eth_getUncleCountByBlockHash', [s.incReceipt.blockHash]), '0x0');
  });

  method('eth_getUncleCountByBlockNumber', 'is 0x0', async () => {
    assert.equal(await ok('eth_getUncleCountByBlockNumber', [s.incReceipt.blockNumber]), '0x0');
  });

  method('eth_getUncleByBlockHashAndIndex', 'is null (no uncles)', async () => {
    assert.equal(await ok('eth_getUncleByBlockHashAndIndex', [s.incReceipt.blockHash, '0x0']), null);
  });

  method('eth_getUncleByBlockNumberAndIndex', 'is null (no uncles)', async () => {
    assert.equal(await ok('eth_getUncleByBlockNumberAndIndex', [s.incReceipt.blockNumber, '0x0']), null);
  });

  method('eth_getTransactionByHash', 'finds a mined transaction, and null for an unknown hash', async () => {
    const tx = await ok<any>('eth_getTransactionByHash', [s.incHash]);
    assert.equal(tx.hash, s.incHash);
    same(tx.from, s.from);
    same(tx.to, s.counter);
    assert.equal(tx.input, INCREMENT);
    assert.equal(tx.blockHash, s.incReceipt.blockHash);
    assert.equal(await ok('eth_getTransactionByHash', [UNKNOWN_HASH]), null);
  });

  method('eth_getTransactionByBlockHashAndIndex', 'finds the transaction at index 0', async () => {
    const tx = await ok<any>('eth_getTransactionByBlockHashAndIndex', [s.incReceipt.blockHash, '0x0']);
    assert.equal(tx.hash, s.incHash);
    assert.equal(await ok('eth_getTransactionByBlockHashAndIndex', [s.incReceipt.blockHash, '0x5']), null);
  });

  method('eth_getTransactionByBlockNumberAndIndex', 'finds the transaction at index 0', async () => {
    const tx = await ok<any>('eth_getTransactionByBlockNumberAndIndex', [s.incReceipt.blockNumber, '0x0']);
    assert.equal(tx.hash, s.incHash);
    assert.equal(tx.transactionIndex, '0x0');
  });

  method('eth_getTransactionReceipt', 'has status 0x1, the contract address of a deployment, the log, and null when unknown', async () => {
    const r = await ok<any>('eth_getTransactionReceipt', [s.incHash]);
    assert.equal(r.status, '0x1');
    assert.equal(r.transactionHash, s.incHash);
    assert.equal(r.contractAddress, null);
    assert.equal(r.logs.length, 1);
    same(r.logs[0].address, s.counter);
    assert.equal(r.logs[0].topics[0], INCREMENTED);
    if (r.blockTimestamp !== undefined) {
      // A QUANTITY (schema), and the block's timestamp.
      const block = await g.call('eth_getBlockByHash', [r.blockHash, false]);
      assert.equal(r.blockTimestamp, block.timestamp);
    }
    const d = await ok<any>('eth_getTransactionReceipt', [s.deployHash]);
    same(d.contractAddress, s.counter);
    assert.equal(d.to, null);
    assert.equal(await ok('eth_getTransactionReceipt', [UNKNOWN_HASH]), null);
  });

  // ---- logs and filters ----

  method('eth_getLogs', 'returns the emitted Incremented log', async () => {
    const logs = await ok<any[]>('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: s.counter, topics: [INCREMENTED] }]);
    const log = logs.find((l) => l.transactionHash === s.incHash);
    assert.ok(log, 'the log of increment() is found');
    assert.equal(log.blockHash, s.incReceipt.blockHash);
    const [step, newCount] = abi.decodeEventLog('Incremented', log.data, log.topics).toArray().slice(1);
    assert.deepEqual([step, newCount], [1n, 6n]);
    const byHash = await ok<any[]>('eth_getLogs', [{ blockHash: s.incReceipt.blockHash }]);
    assert.equal(byHash.length, 1);
    assert.deepEqual(await ok('eth_getLogs', [{ fromBlock: '0x0', toBlock: s.transferReceipt.blockNumber, address: s.counter }]), []);
  });

  method('eth_newFilter', 'creates a log filter whose logs include the emitted one', async () => {
    const f = await ok<string>('eth_newFilter', [{ fromBlock: '0x0', address: s.counter }]);
    const logs = await g.call<any[]>('eth_getFilterLogs', [f]);
    assert.ok(logs.some((l) => l.transactionHash === s.incHash));
    assert.equal(await g.call('eth_uninstallFilter', [f]), true);
  });

  method('eth_newBlockFilter', 'creates a filter that reports the next block', async () => {
    const f = await ok<string>('eth_newBlockFilter');
    const { receipt } = await send({ to: s.to, value: '0x1' });
    const hashes = await g.call<string[]>('eth_getFilterChanges', [f]);
    assert.ok(hashes.includes(receipt.blockHash));
    await g.call('eth_uninstallFilter', [f]);
  });

  method('eth_newPendingTransactionFilter', 'creates a filter that reports the next transaction', async () => {
    const f = await ok<string>('eth_newPendingTransactionFilter');
    const { hash } = await send({ to: s.to, value: '0x1' });
    const hashes = await g.call<string[]>('eth_getFilterChanges', [f]);
    assert.ok(hashes.includes(hash));
    await g.call('eth_uninstallFilter', [f]);
  });

  method('eth_uninstallFilter', 'is true once, then false', async () => {
    const f = await g.call<string>('eth_newBlockFilter');
    assert.equal(await ok('eth_uninstallFilter', [f]), true);
    assert.equal(await ok('eth_uninstallFilter', [f]), false);
  });

  method('eth_getFilterChanges', 'returns nothing, then the new logs and blocks after a new transaction', async () => {
    const logFilter = await g.call<string>('eth_newFilter', [{ address: s.counter, topics: [INCREMENTED] }]);
    const blockFilter = await g.call<string>('eth_newBlockFilter');
    // Nothing happened since: an empty answer, for both kinds.
    assert.deepEqual(await ok('eth_getFilterChanges', [logFilter]), []);
    assert.deepEqual(await ok('eth_getFilterChanges', [blockFilter]), []);
    const { hash, receipt } = await send({ to: s.counter, data: INCREMENT });
    const logs = await ok<any[]>('eth_getFilterChanges', [logFilter]);
    assert.equal(logs.length, 1);
    assert.equal(logs[0].transactionHash, hash);
    assert.deepEqual(await ok('eth_getFilterChanges', [blockFilter]), [receipt.blockHash]);
    // Changes are reported once.
    assert.deepEqual(await ok('eth_getFilterChanges', [logFilter]), []);
    await g.call('eth_uninstallFilter', [logFilter]);
    await g.call('eth_uninstallFilter', [blockFilter]);
  });

  method('eth_getFilterLogs', 'returns every log matching the filter, from its fromBlock', async () => {
    const f = await g.call<string>('eth_newFilter', [{ fromBlock: s.incReceipt.blockNumber, toBlock: s.incReceipt.blockNumber, address: s.counter }]);
    const logs = await ok<any[]>('eth_getFilterLogs', [f]);
    assert.equal(logs.length, 1);
    assert.equal(logs[0].transactionHash, s.incHash);
    assert.equal(logs[0].logIndex, '0x0');
    await g.call('eth_uninstallFilter', [f]);
  });

  method('eth_pendingTransactions', 'is an array (empty: automine leaves nothing pending)', async () => {
    const txs = await ok<unknown[]>('eth_pendingTransactions');
    assert.ok(Array.isArray(txs));
  });

  // ---- tracing ----

  method('debug_traceTransaction', 'gives struct logs, a call frame with callTracer, and -32000 for an unknown hash', async () => {
    const t = await ok<any>('debug_traceTransaction', [s.incHash]);
    assert.equal(t.failed, false);
    assert.ok(t.structLogs.length > 0, 'struct logs are not empty');
    assert.ok(t.structLogs.some((l: { op: string }) => l.op === 'LOG2'), 'the trace shows the emitted log');
    const frame = await ok<any>('debug_traceTransaction', [s.incHash, { tracer: 'callTracer' }]);
    assert.equal(frame.type, 'CALL');
    same(frame.from, s.from);
    same(frame.to, s.counter);
    const err = await fails('debug_traceTransaction', [UNKNOWN_HASH]);
    assert.equal(err.code, -32000);
    assert.equal(err.message, 'transaction not found');
  });

  method('debug_traceCall', 'traces a call without sending it', async () => {
    const t = await ok<any>('debug_traceCall', [{ from: s.from, to: s.counter, data: INCREMENT }, 'latest']);
    assert.equal(t.failed, false);
    assert.ok(t.structLogs.length > 0);
    const frame = await ok<any>('debug_traceCall', [{ from: s.from, to: s.counter, data: INCREMENT }, 'latest', { tracer: 'callTracer' }]);
    assert.equal(frame.type, 'CALL');
    same(frame.to, s.counter);
  });

  method('debug_traceBlockByNumber', 'traces each transaction of the block', async () => {
    const traces = await ok<any[]>('debug_traceBlockByNumber', [s.incReceipt.blockNumber]);
    assert.equal(traces.length, 1);
    assert.ok(traces[0].result.structLogs.length > 0);
  });

  method('debug_traceBlockByHash', 'traces each transaction of the block, with callTracer', async () => {
    const traces = await ok<any[]>('debug_traceBlockByHash', [s.incReceipt.blockHash, { tracer: 'callTracer' }]);
    assert.equal(traces.length, 1);
    assert.equal(traces[0].result.type, 'CALL');
    same(traces[0].result.to, s.counter);
  });

  test('every allowed method has its test above (49)', () => {
    assert.equal(ALLOWED_METHODS.length, 49);
    assert.deepEqual([...covered].sort(), [...ALLOWED_METHODS].sort());
  });

  // ---- not allowed ----

  for (const name of ['getBalance', 'eth_foo', 'anvil_setBalance', 'evm_mine']) {
    test(`${name} is -32601 with HTTP 200`, async () => {
      const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: name, params: [] });
      assert.equal(r.status, 200);
      assert.equal(r.body.id, 1);
      assert.equal(r.body.result, undefined);
      assert.equal(r.body.error.code, -32601);
      assert.equal(r.body.error.message, `the method ${name} does not exist/is not available`);
    });
  }
});
