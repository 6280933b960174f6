import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const hex = (n: number | bigint) => '0x' + n.toString(16);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ADDR = '0x00000000000000000000000000000000000000aa';

/**
 * A node whose head the test moves: eth_blockNumber is `head`, eth_getBalance answers `balance(block)` (so a
 * stale answer shows), and `calls` counts what reached it, by method.
 */
class StubNode {
  head = 100;
  balance = (block: string) => hex(this.head * 1000 + (block.startsWith('0x') ? Number(block) : 0));
  calls = new Map<string, number>();
  delayMs = 0;
  server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', async () => {
      if (this.delayMs) await sleep(this.delayMs);
      const doc = JSON.parse(body);
      const answer = (c: { id: number; method: string; params: string[] }) => {
        this.calls.set(c.method, (this.calls.get(c.method) ?? 0) + 1);
        const result = c.method === 'eth_blockNumber' ? hex(this.head)
          : c.method === 'eth_chainId' ? '0x5'
            : c.method === 'eth_getBalance' ? this.balance(c.params[1])
              : null;
        return { jsonrpc: '2.0', id: c.id, result };
      };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(Array.isArray(doc) ? doc.map(answer) : answer(doc)));
    });
  });
  url = '';
  count = (method: string) => this.calls.get(method) ?? 0;
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }
  close() {
    this.server.closeAllConnections();
    this.server.close();
  }
}

describe('response cache (docs/decisions.md §9)', () => {
  let g: TestGateway;
  let node: StubNode;
  const POLL = 100;

  before(async () => {
    node = new StubNode();
    await node.start();
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1 }, stubnet: { chainId: 5, upstream: node.url, finalityDepth: 10 } },
      upstreams: { checkIntervalMs: POLL },
    });
  });
  after(async () => {
    await g?.close();
    node?.close();
  });

  const rpc = (method: string, params: unknown[] = [], network = 'mainnet') =>
    g.rpc({ jsonrpc: '2.0', id: 1, method, params }, { network });
  const result = async (method: string, params: unknown[] = [], network = 'mainnet') => {
    const r = await rpc(method, params, network);
    assert.equal(r.body.error, undefined, JSON.stringify(r.body.error));
    return { value: r.body.result, cache: r.headers.get('x-cache') };
  };

  test('a repeated read is a HIT with the same answer, and the node is asked once', async () => {
    const before = node.count('eth_getBalance');
    const a = await result('eth_getBalance', [ADDR, 'latest'], 'stubnet');
    const b = await result('eth_getBalance', [ADDR, 'latest'], 'stubnet');
    assert.deepEqual([a.cache, b.cache], ['MISS', 'HIT']);
    assert.equal(b.value, a.value);
    assert.equal(node.count('eth_getBalance') - before, 1);
  });

  test("X-Cache tells an account of its own calls only: another account's identical call is not told HIT", async () => {
    const acct = await g.gw.accounts.createAccount({ name: 'prober', email: `prober-${Math.random()}@example.com`, planId: 'test' });
    const other = (await g.gw.accounts.createKey(acct.id, { name: 'prober' })).value;
    const params = [ADDR.replace('aa', 'ac'), hex(30)];
    const call = (key?: string) => g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params }, { network: 'stubnet', key });
    const first = await call();
    const again = await call();
    const before = node.count('eth_getBalance');
    const probe = await call(other);
    console.log(`X-Cache: the filler's calls ${first.headers.get('x-cache')}, ${again.headers.get('x-cache')}; another account's identical call: ${probe.headers.get('x-cache')}`);
    assert.deepEqual([first.headers.get('x-cache'), again.headers.get('x-cache')], ['MISS', 'HIT']);
    assert.equal(probe.body.result, first.body.result, 'the other account is answered from the cache all the same');
    assert.equal(node.count('eth_getBalance'), before, 'the node is not asked again');
    assert.notEqual(probe.headers.get('x-cache'), 'HIT', 'the header does not tell one account what another asked');
    // The entry stays the filler's: the filler is still told HIT (were it told MISS after another account's call,
    // that would tell it someone else asked).
    assert.equal((await call()).headers.get('x-cache'), 'HIT');
  });

  test("answers tied to latest end when the node's head moves; answers below the finality depth do not", async () => {
    const latest1 = await result('eth_getBalance', [ADDR, 'latest'], 'stubnet');
    const old1 = await result('eth_getBalance', [ADDR, hex(50)], 'stubnet'); // 100 - 10 >= 50: final
    const recent1 = await result('eth_getBalance', [ADDR, hex(95)], 'stubnet'); // within the depth
    node.head = 101;
    await sleep(POLL * 3);
    const latest2 = await result('eth_getBalance', [ADDR, 'latest'], 'stubnet');
    assert.equal(latest2.cache, 'MISS');
    assert.equal(latest2.value, hex(101_000), 'the new head is seen');
    assert.notEqual(latest2.value, latest1.value);
    const old2 = await result('eth_getBalance', [ADDR, hex(50)], 'stubnet');
    assert.deepEqual([old2.cache, old2.value], ['HIT', old1.value], 'a final block keeps its answer');
    const recent2 = await result('eth_getBalance', [ADDR, hex(95)], 'stubnet');
    assert.equal(recent2.cache, 'MISS', 'a block within the finality depth is asked again');
    assert.notEqual(recent2.value, recent1.value);
  });

  test('a chain that goes back (a restore, a deep reorganisation) drops even final answers', async () => {
    const before = await result('eth_getBalance', [ADDR, hex(60)], 'stubnet');
    assert.equal((await result('eth_getBalance', [ADDR, hex(60)], 'stubnet')).cache, 'HIT');
    node.head = 90;
    await sleep(POLL * 3);
    const afterBack = await result('eth_getBalance', [ADDR, hex(60)], 'stubnet');
    assert.equal(afterBack.cache, 'MISS');
    assert.notEqual(afterBack.value, before.value);
  });

  test('identical calls in flight at once reach the node once', async () => {
    node.delayMs = 100;
    try {
      const before = node.count('eth_getBalance');
      const params = [ADDR.replace('aa', 'ab'), 'latest'];
      const answers = await Promise.all(Array.from({ length: 20 }, () => result('eth_getBalance', params, 'stubnet')));
      assert.equal(node.count('eth_getBalance') - before, 1);
      assert.equal(new Set(answers.map((a) => a.value)).size, 1);
    } finally {
      node.delayMs = 0;
    }
  });

  test('batch items are served from the cache too', async () => {
    await result('eth_getBalance', [ADDR, hex(40)], 'stubnet');
    const before = node.count('eth_getBalance');
    const r = await g.rpc([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_getBalance', params: [ADDR, hex(40)] })), { network: 'stubnet' });
    assert.equal(r.body.length, 3);
    assert.equal(node.count('eth_getBalance') - before, 0);
    assert.equal(r.headers.get('x-cache'), null, 'X-Cache is for single requests');
  });

  test('on the embedded chain a transaction is seen at once: latest answers end with the write', async () => {
    const [from] = (await result('eth_accounts')).value as string[];
    const to = '0x00000000000000000000000000000000000000b0';
    const bal0 = BigInt((await result('eth_getBalance', [to, 'latest'])).value);
    assert.equal((await result('eth_getBalance', [to, 'latest'])).cache, 'HIT');
    const head0 = Number((await result('eth_blockNumber')).value);
    assert.equal((await result('eth_blockNumber')).cache, 'HIT');

    const hash = (await result('eth_sendTransaction', [{ from, to, value: '0x5' }])).value;
    let receipt = null;
    for (let i = 0; i < 100 && !receipt; i++) {
      receipt = (await result('eth_getTransactionReceipt', [hash])).value;
      if (!receipt) await sleep(20);
    }
    assert.ok(receipt, 'the receipt appears');
    assert.equal(BigInt((await result('eth_getBalance', [to, 'latest'])).value), bal0 + 5n);
    assert.equal(Number((await result('eth_blockNumber')).value), head0 + 1);
    // The mined receipt is final on a chain nothing reorganises: kept.
    assert.equal((await result('eth_getTransactionReceipt', [hash])).cache, 'HIT');
    // State at a past block is final too.
    const old = await result('eth_getBalance', [to, hex(head0)]);
    assert.equal(BigInt(old.value), bal0);
    assert.equal((await result('eth_getBalance', [to, hex(head0)])).cache, 'HIT');
  });

  test('an embedded chain that restarts from its snapshot starts with an empty cache', async () => {
    const params = ['0x00000000000000000000000000000000000000c0', '0x0'];
    await result('eth_getBalance', params);
    assert.equal((await result('eth_getBalance', params)).cache, 'HIT');
    const sup = g.gw.networks.supervisors.find((s) => s.pid !== undefined && s.network === 'mainnet')!;
    const old = sup.pid!;
    process.kill(old, 'SIGKILL');
    for (let i = 0; i < 200 && (sup.pid === undefined || sup.pid === old); i++) await sleep(25);
    assert.notEqual(sup.pid, old, 'a new anvil runs');
    // A new process is not yet a chain: it replays its journal first, and on a busy machine that can outlast a
    // call's wait for it (a 503 the caller may retry). Retry a call that is never cached until the chain serves.
    let back = await rpc('eth_accounts');
    for (let i = 0; i < 30 && back.body.error; i++) {
      assert.equal(back.status, 503, JSON.stringify(back.body.error));
      back = await rpc('eth_accounts');
    }
    assert.equal(back.body.error, undefined, 'the restarted chain serves');
    const again = await rpc('eth_getBalance', params);
    assert.equal(again.body.error, undefined);
    assert.equal(again.headers.get('x-cache'), 'MISS', 'what was known of the old chain was dropped');
  });

  test('writes, signatures, the pending block and filters are never served from the cache', async () => {
    const [from] = (await result('eth_accounts')).value as string[];
    for (const [method, params] of [
      ['eth_getTransactionCount', [from, 'pending']],
      ['eth_accounts', []],
      ['eth_sign', [from, '0xdeadbeef']],
      ['eth_newBlockFilter', []],
    ] as const) {
      await rpc(method, [...params]);
      const again = await rpc(method, [...params]);
      assert.equal(again.headers.get('x-cache'), 'MISS', method);
    }
  });
});

describe('response cache off', () => {
  let g: TestGateway;
  let node: StubNode;
  before(async () => {
    node = new StubNode();
    await node.start();
    g = await startTestGateway({ networks: { stubnet: { chainId: 5, upstream: node.url } }, cache: { enabled: false } });
  });
  after(async () => {
    await g?.close();
    node?.close();
  });

  test('every call reaches the node and no X-Cache header is sent', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [ADDR, 'latest'] }, { network: 'stubnet' });
      assert.equal(r.headers.get('x-cache'), null);
    }
    assert.equal(node.count('eth_getBalance'), 3);
  });
});
