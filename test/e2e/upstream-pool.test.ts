// Runs alone (scripts/run-tests.mjs): a node swapped for another chain must be out within 2 s.
/**
 * One network, several real nodes: three anvil processes behind one network, with faults made the way
 * they happen (SIGKILL, SIGSTOP, a node that stops mining, a node answering 429), seen from a client of the gateway.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { banner } from '../../src/cli/banner.ts';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** The first account of the test mnemonic, funded in every anvil's genesis. */
const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pool = (nodes: TestAnvil[], extra: Record<string, unknown> = {}) =>
  ({ chainId: 1, upstreams: nodes.map((n) => ({ url: n.url, timeoutMs: 1000 })), ...extra });

/** A signed transfer (or, with `data` and no `to`, a contract creation) from `account`. */
async function signed(nonce: number, more: { to?: `0x${string}`; data?: `0x${string}` } = { to: '0x00000000000000000000000000000000000000b0' }) {
  return account.signTransaction({
    chainId: 1, type: 'eip1559', nonce, gas: 200_000n, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, value: 1n, ...more,
  });
}

describe('three anvil nodes behind one network: failover', { timeout: 120_000 }, () => {
  let nodes: TestAnvil[];
  let g: TestGateway;
  before(async () => {
    nodes = await Promise.all([startAnvil(), startAnvil(), startAnvil()]);
    g = await startTestGateway({
      networks: { pool: pool(nodes) },
      upstreams: { checkIntervalMs: 100, breakerCooldownMs: 500 },
      cache: { enabled: false }, // every read reaches a node
    });
  });
  after(async () => {
    for (const n of nodes ?? []) { try { process.kill(n.proc.pid!, 'SIGCONT'); } catch { /* gone */ } n.stop(); }
    await g?.close();
  });

  test('one node killed (SIGKILL), another stalled (SIGSTOP) and resumed, under a steady stream of reads: no read fails', async () => {
    let stop = false;
    let sent = 0;
    const failures: string[] = [];
    let last = 0;
    const reads: Array<[string, unknown[]]> = [
      ['eth_blockNumber', []], ['eth_getBalance', [account.address, 'latest']], ['eth_getBlockByNumber', ['latest', false]], ['eth_chainId', []],
    ];
    const client = async (k: number) => {
      for (let i = k; !stop; i++) {
        const [method, params] = reads[i % reads.length];
        const r = await g.rpc({ jsonrpc: '2.0', id: i, method, params }, { network: 'pool' });
        sent++;
        if (r.status !== 200 || r.body?.error) failures.push(`${method}: ${r.status} ${JSON.stringify(r.body?.error)}`);
        else if (method === 'eth_blockNumber') {
          const n = Number(r.body.result);
          if (n < last) failures.push(`eth_blockNumber went back: ${n} < ${last}`);
          last = n;
        }
      }
    };
    const clients = [0, 1, 2, 3].map(client);
    // Blocks keep coming, through the gateway: each raw transaction reaches every live primary.
    let nonce = 0;
    const writer = (async () => {
      while (!stop) {
        const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [await signed(nonce)] }, { network: 'pool' });
        if (r.body?.error) failures.push(`eth_sendRawTransaction: ${JSON.stringify(r.body.error)}`);
        else nonce++;
        await sleep(100);
      }
    })();
    const phase = async (what: string, ms: number, act?: () => void) => {
      act?.();
      const before = sent;
      await sleep(ms);
      return `${what}: ${sent - before} reads`;
    };
    const log = [
      await phase('all three up', 1000),
      await phase('node 1 killed (SIGKILL)', 1500, () => nodes[0].proc.kill('SIGKILL')),
      await phase('node 2 stalled (SIGSTOP)', 2500, () => process.kill(nodes[1].proc.pid!, 'SIGSTOP')),
      await phase('node 2 resumed (SIGCONT)', 1500, () => process.kill(nodes[1].proc.pid!, 'SIGCONT')),
    ];
    stop = true;
    await Promise.all([...clients, writer]);
    console.log(`failover: ${sent} reads, ${failures.length} failed; ${nonce} transactions; ${log.join('; ')}`);
    if (failures.length > 0) {
      // What a failure needs to be understood: where each live node's chain is, and what the gateway thinks of them.
      const heads = await Promise.all(nodes.slice(1).map((n) => n.call('eth_blockNumber').then(Number, (e: Error) => e.message)));
      const txs = await Promise.all(nodes.slice(1).map((n) => n.call('eth_getTransactionCount', [account.address, 'latest']).then(Number, (e: Error) => e.message)));
      const readyz = await (await fetch(`${g.url}/readyz`)).text();
      console.log(`failover, failed: heads of nodes 2 and 3 ${heads.join(', ')}; nonces ${txs.join(', ')}; /readyz ${readyz}`);
    }
    assert.deepEqual(failures, []);
    const ready = await (await fetch(`${g.url}/readyz`)).json() as { upstreams: Array<{ upstream: string; state: string }> };
    const states = ready.upstreams.map((u) => u.state);
    console.log(`failover: /readyz upstream states afterwards: ${states.join(', ')}`);
    assert.equal(states[0], 'down', 'the killed node is shown down');
  });
});

describe('a lagging node is skipped; the head a client sees never goes back', { timeout: 120_000 }, () => {
  let nodes: TestAnvil[];
  let g: TestGateway;
  before(async () => {
    // Two nodes mine a block a second; the third mines nothing and falls behind.
    nodes = await Promise.all([startAnvil(['--block-time', '1']), startAnvil(['--block-time', '1']), startAnvil(['--no-mining'])]);
    g = await startTestGateway({
      networks: { pool: pool(nodes, { maxLagBlocks: 2 }) },
      upstreams: { checkIntervalMs: 100 },
      cache: { enabled: false },
    });
  });
  after(async () => {
    for (const n of nodes ?? []) n.stop();
    await g?.close();
  });

  test('1,000 rounds of eth_blockNumber then eth_getBlockByNumber("latest"): never backwards, never below', async () => {
    // Until the idle node is more than 2 blocks behind (the miners reach block 3).
    for (;;) {
      if (Number(await nodes[0].call('eth_blockNumber')) >= 3 && Number(await nodes[1].call('eth_blockNumber')) >= 3) break;
      await sleep(200);
    }
    await eventually(() => g.gw.networks.get('pool')!.chain.status()[2].state === 'lagging', 5000, 'the idle node is seen lagging');
    let last = 0;
    let backwards = 0;
    let below = 0;
    for (let i = 0; i < 1000; i++) {
      const n = Number((await g.call('eth_blockNumber', [], 'pool')) as string);
      const b = (await g.call('eth_getBlockByNumber', ['latest', false], 'pool')) as { number: string };
      if (n < last) backwards++;
      if (Number(b.number) < n) below++;
      last = Math.max(last, n);
    }
    const status = g.gw.networks.get('pool')!.chain.status();
    console.log(`lag: 1,000 rounds up to block ${last}: ${backwards} times eth_blockNumber went back, ${below} times latest was below it; upstreams ${status.map((s) => `${s.state} (head ${s.head}, lag ${s.lag})`).join(', ')}`);
    assert.equal(backwards, 0);
    assert.equal(below, 0);
    assert.ok(last >= 3);
    assert.equal(status[2].state, 'lagging');
  });
});

describe('writes and refusals across nodes', { timeout: 120_000 }, () => {
  let nodes: TestAnvil[];
  let limited: Server;
  let limitedHits = 0;
  let g: TestGateway;
  before(async () => {
    nodes = await Promise.all([startAnvil(), startAnvil(), startAnvil()]);
    // A hosted node out of its quota: every call 429 with Retry-After.
    limited = createServer((req, res) => {
      limitedHits++;
      req.resume();
      res.writeHead(429, { 'retry-after': '30', 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"error":{"code":429,"message":"Too Many Requests"}}');
    });
    await new Promise<void>((r) => limited.listen(0, '127.0.0.1', r));
    const limitedUrl = `http://127.0.0.1:${(limited.address() as { port: number }).port}`;
    g = await startTestGateway({
      networks: {
        pool: pool(nodes),
        quota: { chainId: 1, upstreams: [{ url: limitedUrl }, { url: nodes[0].url }] },
      },
      upstreams: { checkIntervalMs: 100 },
      cache: { enabled: false },
    });
  });
  after(async () => {
    for (const n of nodes ?? []) n.stop();
    limited?.close();
    await g?.close();
  });

  test('a raw transaction sent once reaches every primary', async () => {
    const raw = await signed(0);
    const hash = await g.call('eth_sendRawTransaction', [raw], 'pool');
    // The client has its answer at the first acceptance; the other nodes' copies are on their way.
    const onEach = await Promise.all(nodes.map(async (n) => {
      for (let i = 0; i < 100; i++) {
        if (await n.call('eth_getTransactionByHash', [hash])) return true;
        await sleep(20);
      }
      return false;
    }));
    console.log(`broadcast: ${hash} on ${onEach.filter(Boolean).length} of 3 nodes`);
    for (const [i, has] of onEach.entries()) assert.ok(has, `node ${i + 1} has the transaction`);
  });

  test('a node answering 429 is retried elsewhere at once and then left alone for its Retry-After', async () => {
    const answers = [];
    for (let i = 0; i < 50; i++) answers.push(await g.rpc({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [account.address, 'latest'] }, { network: 'quota' }));
    const failed = answers.filter((a) => a.status !== 200 || a.body.error);
    console.log(`429: 50 reads, ${failed.length} failed; the limited node was asked ${limitedHits} times (health checks included)`);
    assert.equal(failed.length, 0);
    assert.ok(limitedHits <= 3, `the limited node was left alone: ${limitedHits} calls`);
  });
});

describe('a reorganisation on every node of a three-node network', { timeout: 120_000 }, () => {
  let nodes: TestAnvil[];
  let g: TestGateway;
  /** Mines one block on every node with the same timestamp: the same block on each (they are in lockstep). */
  const mineAll = (timestamp: number) => Promise.all(nodes.map((n) => n.call('evm_mine', [{ timestamp }])));
  before(async () => {
    // Three nodes of one chain: they mine only when told, the same blocks, as nodes of a real network agree.
    nodes = await Promise.all([startAnvil(['--no-mining']), startAnvil(['--no-mining']), startAnvil(['--no-mining'])]);
    g = await startTestGateway({ networks: { pool: pool(nodes) }, upstreams: { checkIntervalMs: 100 } });
  });
  after(async () => {
    for (const n of nodes ?? []) n.stop();
    await g?.close();
  });

  test('a log filter reports the dropped log again with removed: true; the cache serves the new block', async () => {
    const snapshots = await Promise.all(nodes.map((n) => n.call('evm_snapshot')));
    const filter = await g.call('eth_newFilter', [{}], 'pool');
    // A contract creation whose init code emits one log (PUSH1 0 PUSH1 0 LOG0 STOP), sent once, mined on all three.
    const hash = await g.call('eth_sendRawTransaction', [await signed(0, { data: '0x60006000a000' })], 'pool');
    for (const n of nodes) {
      for (let i = 0; i < 100 && !(await n.call('eth_getTransactionByHash', [hash])); i++) await sleep(20);
    }
    await mineAll(1735689700);
    const block1 = (await g.call('eth_getBlockByNumber', ['0x1', false], 'pool')) as { hash: string };
    const first = (await g.call('eth_getFilterChanges', [filter], 'pool')) as any[];
    assert.equal(first.length, 1);
    assert.equal(first[0].removed ?? false, false);
    assert.equal(first[0].blockHash, block1.hash);

    // Every node goes back to before the transaction and builds two other blocks: block 1 is replaced.
    await Promise.all(nodes.map((n, i) => n.call('evm_revert', [snapshots[i]])));
    await mineAll(1735689800);
    await mineAll(1735689801);
    await eventually(() => (g.gw.networks.get('pool')!.head.number ?? 0) >= 2, 5000, 'the chain module saw block 2');
    const second = (await g.call('eth_getFilterChanges', [filter], 'pool')) as any[];
    console.log(`reorg on three nodes: first poll ${first.length} log, after the reorganisation ${second.map((l) => `${Number(l.blockNumber)}${l.removed ? ' removed' : ''}`).join(', ')}`);
    assert.deepEqual(second.map((l) => [l.blockHash, l.removed]), [[block1.hash, true]]);
    const newBlock1 = (await g.call('eth_getBlockByNumber', ['0x1', false], 'pool')) as { hash: string; transactions: unknown[] };
    assert.notEqual(newBlock1.hash, block1.hash, 'block 1 is the new one, not a cached answer of the old');
    assert.equal(newBlock1.transactions.length, 0);
  });
});

describe('start-up: a node of another chain is refused, a dead one is shown, the rest serve', { timeout: 60_000 }, () => {
  let nodes: TestAnvil[];
  let g: TestGateway;
  let dead: TcpServer;
  before(async () => {
    nodes = await Promise.all([startAnvil(), startAnvil([], 5)]);
    // A dead node: its port held (a port merely left free may be taken by another test's node meanwhile), every
    // connection dropped at once, so it never answers.
    dead = createTcpServer((socket) => socket.destroy());
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const deadPort = (dead.address() as { port: number }).port;
    g = await startTestGateway({
      networks: { pool: { chainId: 1, upstreams: [{ url: nodes[1].url }, { url: `http://127.0.0.1:${deadPort}` }, { url: nodes[0].url }] } },
      upstreams: { checkIntervalMs: 100 },
      cache: { enabled: false },
    });
  });
  after(async () => {
    for (const n of nodes ?? []) n.stop();
    await g?.close();
    dead?.close();
  });

  test('the banner and /readyz say which node is refused, which is down; every read is answered by the right chain', async () => {
    const text = banner(g.gw);
    const lines = text.split('\n').filter((l) => l.includes('primary http'));
    console.log(`start-up banner:\n${lines.join('\n')}`);
    assert.match(lines[0], /: refused .*chain id 5 is not the network's 1/);
    assert.match(lines[1], /: down/);
    assert.match(lines[2], /: up, head 0/);
    const ready = await fetch(`${g.url}/readyz`);
    assert.equal(ready.status, 200, 'one node of the right chain is enough to be ready');
    const body = await ready.json() as { upstreams: Array<{ state: string; chainId?: number }> };
    assert.deepEqual(body.upstreams.map((u) => u.state), ['refused', 'down', 'up']);
    for (let i = 0; i < 20; i++) assert.equal(await g.call('eth_chainId', [], 'pool'), '0x1');
  });
});

describe('dedicated upstreams serve Dedicated keys', { timeout: 60_000 }, () => {
  let nodes: TestAnvil[];
  let g: TestGateway;
  before(async () => {
    nodes = await Promise.all([startAnvil(), startAnvil()]);
    g = await startTestGateway({
      networks: { pool: { chainId: 1, upstreams: [{ url: nodes[0].url }, { url: nodes[1].url, role: 'dedicated' }] } },
      upstreams: { checkIntervalMs: 100 },
      cache: { enabled: false },
    });
  });
  after(async () => {
    for (const n of nodes ?? []) n.stop();
    await g?.close();
  });

  test("a Dedicated key's calls go to the dedicated node; a Standard key's never do", async () => {
    // Only the dedicated node has this transaction (sent to it directly), so the two nodes answer the nonce apart.
    await nodes[1].call('eth_sendRawTransaction', [await signed(0)]);
    const account0 = await g.gw.accounts.createAccount({ name: 'dedicated', email: `dedicated-${Date.now()}@example.com` });
    const dedicated = (await g.gw.accounts.createKey(account0.id, { name: 'd', type: 'Dedicated' })).value;
    const nonce = async (key?: string) => (await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getTransactionCount', params: [account.address, 'pending'] }, { network: 'pool', key })).body.result;
    const seen = { standard: new Set<string>(), dedicated: new Set<string>() };
    for (let i = 0; i < 20; i++) {
      seen.standard.add(await nonce());
      seen.dedicated.add(await nonce(dedicated));
    }
    console.log(`dedicated: a Standard key saw nonce ${[...seen.standard]}, a Dedicated key ${[...seen.dedicated]}`);
    assert.deepEqual([...seen.standard], ['0x0']);
    assert.deepEqual([...seen.dedicated], ['0x1']);
  });
});

describe("a node behind a URL replaced by one of another chain: out at the next check, back once fixed, no restart", { timeout: 60_000 }, () => {
  let nodes: TestAnvil[];
  let proxy: Server;
  let g: TestGateway;
  /** Where the proxy sends what it gets: the URL's node, as an operator's load balancer would. */
  let target = '';
  before(async () => {
    nodes = await Promise.all([startAnvil(), startAnvil([], 5)]);
    target = nodes[0].url;
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c)).on('end', () => {
        fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
          .then(async (r) => { res.writeHead(r.status, { 'content-type': 'application/json' }); res.end(await r.text()); })
          .catch(() => { res.writeHead(502); res.end(); });
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    g = await startTestGateway({
      networks: { pool: { chainId: 1, upstreams: [{ url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}` }, { url: nodes[0].url }] } },
      upstreams: { checkIntervalMs: 100 },
      cache: { enabled: false },
    });
  });
  after(async () => {
    await g?.close();
    proxy?.close();
    for (const n of nodes ?? []) n.stop();
  });

  test('swapped: refused (said in /readyz and the log) within 2 s; fixed: up again within 2 s', async () => {
    const chain = g.gw.networks.get('pool')!.chain;
    const stateOf = () => chain.status()[0].state;
    await eventually(() => stateOf() === 'up', 5000, 'the proxied node is up');
    /** Resolves with the ms until the chain module says the proxied node is in `state` (its own event, no polling). */
    const until = (state: string) => new Promise<number>((resolve) => {
      const t0 = Date.now();
      const seen = (s: { upstream: string; state: string }) => {
        if (s.upstream === chain.status()[0].upstream && s.state === state) { chain.off('upstream', seen); resolve(Date.now() - t0); }
      };
      chain.on('upstream', seen);
    });
    const refused = until('refused');
    target = nodes[1].url;
    const outMs = await refused;
    const body = await (await fetch(`${g.url}/readyz`)).json() as { upstreams: Array<{ state: string; error?: string }> };
    assert.equal(body.upstreams[0].state, 'refused');
    assert.match(body.upstreams[0].error ?? '', /chain id 5 is not the network's 1/);
    for (let i = 0; i < 20; i++) assert.equal(await g.call('eth_chainId', [], 'pool'), '0x1');
    const back = until('up');
    target = nodes[0].url;
    const backMs = await back;
    console.log(`# a node swapped for chain 5 behind its URL: refused after ${outMs} ms; fixed: up again after ${backMs} ms`);
    assert.ok(outMs < 2000 && backMs < 2000, `out after ${outMs} ms, back after ${backMs} ms`);
  });
});
