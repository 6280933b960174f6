import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Contract, ContractFactory, WebSocketProvider, Wallet } from 'ethers';
import { createPublicClient, createWalletClient, defineChain, webSocket, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { Web3 } from 'web3';
import WebSocket from 'ws';
import { compileCounter } from '../helpers/counter.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { killAll, startNodegate, type NodegateProcess } from '../helpers/process.ts';

/**
 * The endpoint over WebSocket on the key the quick start prints, with the clients users bring
 * (viem's webSocket() transport, ethers v6's WebSocketProvider, web3.js v4's new Web3('ws://…')): reads, writes and their receipts, new blocks and
 * contract events by eth_subscribe. Then what a socket must not do: open with a bad key, subscribe over HTTP, or
 * keep going once its key is revoked.
 */

/** anvil's development accounts 8 and 9 (mnemonic `test test ... junk`): no other suite sends from them. */
const VIEM_KEY = '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97';
const ETHERS_KEY = '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6';
/** anvil's development account 7, for web3.js. */
const WEB3_KEY = '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356';
const STEPS = 5;

/** Resolves once `pred()` holds, checked on each call of the returned `poke` (no timers: events drive it). */
function until(pred: () => boolean) {
  let done!: () => void;
  const p = new Promise<void>((r) => { done = r; });
  return { p, poke: () => { if (pred()) done(); } };
}

describe('WebSocket on the key the quick start prints', { timeout: 300_000 }, () => {
  let ng: NodegateProcess;
  let wsUrl: string;
  const { abi, bytecode } = compileCounter();

  before(async () => {
    ng = await startNodegate();
    wsUrl = ng.rpcUrl('mainnet').replace(/^http/, 'ws');
  });
  after(async () => {
    await ng?.stop();
    await killAll();
    if (ng) rmSync(ng.dataDir, { recursive: true, force: true });
  });

  test('viem webSocket(): a read, a deploy and its receipt, watchBlocks in order, watchContractEvent gets every event', async () => {
    const chain = defineChain({ id: 1, name: 'mainnet', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [], webSocket: [wsUrl] } } });
    const transport = webSocket(wsUrl);
    const client = createPublicClient({ chain, transport });
    const wallet = createWalletClient({ chain, transport, account: privateKeyToAccount(VIEM_KEY) });
    assert.equal(await client.getChainId(), 1);
    const blocks: bigint[] = [];
    let onBlock = () => {};
    const stopBlocks = client.watchBlocks({ onBlock: (b) => { blocks.push(b.number!); onBlock(); } });
    const deploy = await wallet.deployContract({ abi, bytecode: bytecode as Hex, args: [0n] });
    const { contractAddress } = await client.waitForTransactionReceipt({ hash: deploy });
    assert.ok(contractAddress);
    const seen: bigint[] = [];
    const got = until(() => seen.length >= STEPS);
    const stopEvents = client.watchContractEvent({ address: contractAddress, abi, eventName: 'Incremented', onLogs: (logs) => {
      for (const l of logs) seen.push((l as unknown as { args: { newCount: bigint } }).args.newCount);
      got.poke();
    } });
    // The subscription is made before the first increment is sent: its id is answered first on the same socket.
    await client.request({ method: 'eth_chainId' });
    let lastBlock = -1n;
    for (let i = 0; i < STEPS; i++) {
      const hash = await wallet.writeContract({ address: contractAddress, abi, functionName: 'increment' });
      const r = await client.waitForTransactionReceipt({ hash });
      assert.equal(r.status, 'success');
      lastBlock = r.blockNumber;
    }
    await got.p;
    const heard = until(() => blocks.includes(lastBlock));
    onBlock = heard.poke;
    heard.poke();
    await heard.p;
    stopEvents();
    stopBlocks();
    assert.deepEqual(seen, [1n, 2n, 3n, 4n, 5n]);
    // watchBlocks subscribes in the background, so the deploy's block may come before it; from its first block on,
    // every block once and in order, up to the last increment's.
    assert.ok(blocks.length >= STEPS && blocks.at(-1) === lastBlock, `blocks seen: ${blocks.join(', ')}; last increment in ${lastBlock}`);
    for (let i = 1; i < blocks.length; i++) assert.equal(blocks[i], blocks[i - 1] + 1n, `each block once, in order: ${blocks.join(', ')}`);
    await (await transport({ chain }).value!.getRpcClient()).close();
  });

  test("ethers v6 WebSocketProvider: on('block'), a contract event filter, tx.wait()", async () => {
    // cacheTimeout -1: ethers' own 250 ms cache of identical requests would sign the next transaction with the nonce
    // it just used, on a bare anvil too (docs/clients.md); the HTTP suite sets the same.
    const provider = new WebSocketProvider(wsUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
    try {
      const signer = new Wallet(ETHERS_KEY, provider);
      const blocks: number[] = [];
      await provider.on('block', (n: number) => { blocks.push(n); });
      const counter = await new ContractFactory(abi, bytecode, signer).deploy(0);
      await counter.waitForDeployment();
      const c = new Contract(await counter.getAddress(), abi, signer);
      const seen: bigint[] = [];
      const got = until(() => seen.length >= STEPS);
      await c.on('Incremented', (_sender: string, _step: bigint, newCount: bigint) => { seen.push(newCount); got.poke(); });
      for (let i = 0; i < STEPS; i++) await (await c.getFunction('increment')()).wait();
      await got.p;
      assert.deepEqual(seen, [1n, 2n, 3n, 4n, 5n]);
      assert.ok(blocks.length >= 1, 'ethers heard of new blocks');
    } finally {
      await provider.destroy();
    }
  });

  test("web3.js v4 (new Web3('ws://…')): subscribe('newBlockHeaders') in order, subscribe('logs') of a contract, unsubscribe, disconnect", async () => {
    const web3 = new Web3(wsUrl);
    try {
      const me = web3.eth.accounts.privateKeyToAccount(WEB3_KEY);
      web3.eth.accounts.wallet.add(me);
      const heads = await web3.eth.subscribe('newBlockHeaders');
      const blocks: bigint[] = [];
      let onHead = () => {};
      heads.on('data', (h) => { blocks.push(BigInt(h.number!)); onHead(); });
      const deployed = await new web3.eth.Contract(abi).deploy({ data: bytecode, arguments: [0] }).send({ from: me.address });
      const address = deployed.options.address!;
      const event = abi.find((x) => x.type === 'event' && x.name === 'Incremented');
      const topic = web3.eth.abi.encodeEventSignature(event);
      const logs = await web3.eth.subscribe('logs', { address, topics: [topic] });
      const seen: Array<{ count: bigint; tx: string; block: bigint }> = [];
      const got = until(() => seen.length >= STEPS);
      logs.on('data', (l) => {
        const args = web3.eth.abi.decodeLog(event.inputs, l.data as string, (l.topics as string[]).slice(1));
        seen.push({ count: BigInt(args.newCount as bigint), tx: l.transactionHash as string, block: BigInt(l.blockNumber!) });
        got.poke();
      });
      const counter = new web3.eth.Contract(abi, address);
      const receipts: Array<{ tx: string; block: bigint }> = [];
      for (let i = 0; i < STEPS; i++) {
        const r = await counter.methods.increment().send({ from: me.address });
        assert.equal(BigInt(r.status), 1n);
        receipts.push({ tx: r.transactionHash as string, block: BigInt(r.blockNumber) });
      }
      await got.p;
      const lastBlock = receipts.at(-1)!.block;
      const heard = until(() => blocks.includes(lastBlock));
      onHead = heard.poke;
      heard.poke();
      await heard.p;
      assert.deepEqual(seen.map((s) => s.count), [1n, 2n, 3n, 4n, 5n]);
      assert.deepEqual(seen.map(({ tx, block }) => ({ tx, block })), receipts, 'each log in the block and transaction of its receipt');
      // The subscription was answered before the deploy was sent: the deploy's block and every block after it, once
      // and in order, up to the last increment's.
      assert.ok(blocks.length >= STEPS + 1 && blocks.at(-1) === lastBlock, `blocks seen: ${blocks.join(', ')}; last increment in ${lastBlock}`);
      for (let i = 1; i < blocks.length; i++) assert.equal(blocks[i], blocks[i - 1] + 1n, `each block once, in order: ${blocks.join(', ')}`);
      await logs.unsubscribe();
      await heads.unsubscribe();
      // Nothing is left subscribed: the next block reaches no handler (web3 removed them on unsubscribe).
      assert.deepEqual(await web3.eth.clearSubscriptions(), []);
    } finally {
      // web3's socket reconnects when it drops; disconnect() ends it for good (the file exits with no open handle).
      await web3.provider?.disconnect();
    }
  });
});

describe('WebSocket refusals: a bad key, subscriptions over HTTP, a key revoked while its socket is open', { timeout: 120_000 }, () => {
  let g: TestGateway;
  before(async () => { g = await startTestGateway(); });
  after(async () => { await g?.close(); });

  const open = (url: string) => new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
    ws.once('error', reject);
  });
  const ask = (ws: WebSocket, body: unknown) => new Promise<any>((resolve) => {
    ws.once('message', (m) => resolve(JSON.parse(String(m))));
    ws.send(JSON.stringify(body));
  });

  test('a bad key never gets a socket: the upgrade is answered 401', async () => {
    await assert.rejects(open(`${g.url.replace('http', 'ws')}/v1/mainnet/ngk_${'x'.repeat(30)}`), (e: { status?: number }) => e.status === 401);
    await assert.rejects(open(`${g.url.replace('http', 'ws')}/v1/nonet/${g.key}`), (e: { status?: number }) => e.status === 404);
  });

  test('eth_subscribe over HTTP: -32601 notifications not supported, as geth answers', async () => {
    const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] });
    assert.equal(r.status, 200);
    assert.equal(r.body.error.code, -32601);
    assert.equal(r.body.error.message, 'notifications not supported');
  });

  test('over a socket: a batch, a bad subscription kind, unsubscribe; a revoked key stops its socket (1008), its message refused by id', async () => {
    const account = (await g.gw.keys.resolve(g.key)).account.id;
    const { key, value } = await g.gw.accounts.createKey(account, { name: 'socket' });
    const ws = await open(`${g.url.replace('http', 'ws')}/v1/mainnet/${value}`);
    const batch = await ask(ws, [{ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }, { jsonrpc: '2.0', id: 'b', method: 'eth_blockNumber', params: [] }]);
    assert.deepEqual(batch.map((a: { id: unknown }) => a.id), [1, 'b']);
    assert.equal(batch[0].result, '0x1', JSON.stringify(batch));
    const bad = await ask(ws, { jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['everything'] });
    assert.equal(bad.error.code, -32602);
    const sub = await ask(ws, { jsonrpc: '2.0', id: 3, method: 'eth_subscribe', params: ['newHeads'] });
    assert.match(sub.result, /^0x[0-9a-f]{32}$/);
    assert.deepEqual(await ask(ws, { jsonrpc: '2.0', id: 4, method: 'eth_unsubscribe', params: [sub.result] }), { jsonrpc: '2.0', id: 4, result: true });
    assert.deepEqual(await ask(ws, { jsonrpc: '2.0', id: 5, method: 'eth_unsubscribe', params: [sub.result] }), { jsonrpc: '2.0', id: 5, result: false });
    await g.gw.accounts.revokeKey(key.id);
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    const answers: any[] = [];
    ws.on('message', (m) => answers.push(JSON.parse(String(m))));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'eth_chainId', params: [] }));
    assert.equal(await closed, 1008);
    // The message, or the key's check every second, came first: either way no answer but the refusal, by its id.
    for (const a of answers) assert.deepEqual([a.id, a.error?.code], [6, -32010], JSON.stringify(a));
  });
});
