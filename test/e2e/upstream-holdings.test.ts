/**
 * Routing by what each node holds, through the wire: two providers that prune state older than 128 blocks ("missing
 * trie node", test/helpers/provider.ts) and one archive node, in front of one real anvil holding every block's
 * state. What each holds is probed at start (a binary search of eth_getBalance); a read at an old block goes to the
 * archive node only, and no node's "missing trie node" reaches a client. With the archive node down, a read at an old
 * block gets BLOCK_NOT_HELD, naming the blocks the network serves. Hedged reads are off (the test counts calls).
 * Run: node --import tsx --test test/e2e/upstream-holdings.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startProvider, type Provider } from '../helpers/provider.ts';

const SENDER = '0xf39Fd6e51aad88F6F4ce6aB8827279cfFFb92266';
const RECEIVERS = Array.from({ length: 8 }, (_, i) => `0x${(0xb0 + i).toString(16).padStart(40, '0')}`);
const STATE_METHODS = ['eth_getBalance', 'eth_getTransactionCount', 'eth_getCode', 'eth_call'];
const hex = (n: number) => `0x${n.toString(16)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let node: TestAnvil;
let g: TestGateway;
let pruned: Provider[];
let archive: Provider;
let head: number;

before(async () => {
  node = await startAnvil();
  // 400 blocks, a transfer to one of the receivers every 10: balances differ from block to block.
  for (let i = 0; i < 40; i++) {
    await node.call('eth_sendTransaction', [{ from: SENDER, to: RECEIVERS[i % RECEIVERS.length], value: hex(1000 + i) }]);
    await node.call('anvil_mine', [hex(9)]);
  }
  head = Number(await node.call('eth_blockNumber'));
  pruned = [await startProvider(node.url, { pruneOlderThan: 128 }), await startProvider(node.url, { pruneOlderThan: 128 })];
  archive = await startProvider(node.url);
  g = await startTestGateway({
    networks: { pruned: { chainId: 1, upstreams: [{ url: pruned[0].url }, { url: pruned[1].url }, { url: archive.url }] } },
    upstreams: { checkIntervalMs: 100, hedgeMaxMs: 0, breakerCooldownMs: 60_000, holdingsProbeMs: 600_000 },
    cache: { enabled: false },
  });
});

after(async () => {
  await g?.close();
  for (const p of [...(pruned ?? []), archive]) await p?.close();
  node?.stop();
});

/** The upstreams as /readyz shows them. */
const readyz = async () => ((await (await fetch(`${g.url}/readyz`)).json()) as { upstreams: Array<{ upstream: string; state: string; holds?: { state?: { from: number; blocks?: number; by: string } } }> }).upstreams;

/** A state read at block `n`, as a client sends it, and what the archive node itself answers. */
function read(i: number, n: number): { method: string; params: unknown[] } {
  const who = RECEIVERS[i % RECEIVERS.length];
  const method = STATE_METHODS[i % STATE_METHODS.length];
  const params = method === 'eth_call' ? [{ to: who, data: '0x' }, hex(n)] : [who, hex(n)];
  return { method, params };
}

describe('routing by what each node holds', { timeout: 180_000 }, () => {
  test('1,000 state reads at blocks older than the pruned window through two pruned providers and an archive node: every one answered as the archive answers, 0 "missing trie node" or "header not found" reach a client', async () => {
    // The probe at start finds each provider's window (a binary search).
    let shown: Awaited<ReturnType<typeof readyz>> = [];
    for (let i = 0; i < 100; i++) {
      shown = await readyz();
      if (shown.filter((u) => u.holds?.state !== undefined).length === 3) break;
      await sleep(100);
    }
    const windows = shown.map((u) => u.holds?.state);
    console.log(`holds at start (/readyz): ${JSON.stringify(windows)}; probe reads: ${pruned.map((p) => p.calls('eth_getBalance')).join(' and ')} at the pruned providers, ${archive.calls('eth_getBalance')} at the archive`);
    assert.deepEqual(windows.slice(0, 2).map((w) => w?.from), [head - 128, head - 128]);
    assert.equal(windows[2]?.from, 0);

    const since = Date.now();
    const answers: Array<{ i: number; n: number; body: any }> = [];
    let next = 0;
    // Blocks from 1 to the head; two thirds older than the pruned window.
    const blockOf = (i: number) => (i % 3 === 2 ? head - (i % 100) : 1 + ((i * 7) % (head - 140)));
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let i = next++; i < 1000; i = next++) {
        const n = blockOf(i);
        const { method, params } = read(i, n);
        answers.push({ i, n, body: (await g.rpc({ jsonrpc: '2.0', id: i, method, params }, { network: 'pruned' })).body });
      }
    }));
    const errors = answers.filter((a) => a.body.error !== undefined);
    const words = answers.filter((a) => /missing trie node|header not found|not available/i.test(JSON.stringify(a.body)));
    // The archive's own answer to each balance read, straight from the node.
    let wrong = 0;
    for (const a of answers.filter((x) => x.i % STATE_METHODS.length === 0)) {
      const { method, params } = read(a.i, a.n);
      if ((await node.call(method, params)) !== a.body.result) wrong++;
    }
    const upstreamCalls = (p: Provider) => STATE_METHODS.reduce((s, m) => s + p.calls(m, since), 0);
    const calls = [...pruned, archive].map(upstreamCalls);
    const total = calls.reduce((a, b) => a + b, 0);
    const old = answers.filter((a) => a.n < head - 127).length;
    console.log(`state reads: ${answers.length} (${old} older than the pruned window), ${errors.length} errors, ${words.length} with a node's "missing" words, ${wrong} balances unlike the archive's; upstream calls: pruned ${calls[0]} + ${calls[1]}, archive ${calls[2]} = ${(total / answers.length).toFixed(3)} per client call`);
    assert.deepEqual(errors.map((e) => e.body.error), []);
    assert.equal(words.length, 0);
    assert.equal(wrong, 0);
    assert.ok(calls[2] >= old, 'every old read went to the archive');
    assert.ok(total / answers.length <= 1.01, `${total} upstream calls`);
  });

  test('the archive node down: each read at an old block gets BLOCK_NOT_HELD naming the blocks the network serves; recent blocks are still answered', async () => {
    await archive.close();
    // Its breaker opens on the first call that finds it gone (or a check); the reads go on meanwhile.
    const since = Date.now();
    const old = [];
    for (let i = 0; i < 100; i++) old.push((await g.rpc({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [RECEIVERS[i % 8], hex(1 + i)] }, { network: 'pruned' })));
    const recent = [];
    for (let i = 0; i < 20; i++) recent.push((await g.rpc({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [RECEIVERS[i % 8], hex(head - i)] }, { network: 'pruned' })).body);
    const notHeld = old.filter((r) => r.body.error?.data?.reason === 'block_not_held');
    const prunedCalls = pruned.reduce((s, p) => s + p.calls('eth_getBalance', since), 0) - recent.length;
    console.log(`archive down: ${old.length} reads at old blocks, ${notHeld.length} BLOCK_NOT_HELD (HTTP ${[...new Set(old.map((r) => r.status))].join(', ')}), e.g. "${old[11].body.error?.message}"; ${prunedCalls} of them reached a pruned provider; ${recent.filter((r) => r.result !== undefined).length} of ${recent.length} recent reads answered`);
    assert.equal(notHeld.length, old.length, JSON.stringify(old.find((r) => r.body.error?.data?.reason !== 'block_not_held')?.body));
    assert.match(old[11].body.error.message, new RegExp(`^state at block 12 is not held by any node of pruned: state is served from block ${(head - 128).toLocaleString('en-US')} on$`));
    assert.equal(old[11].body.error.code, -32001);
    assert.ok(recent.every((r) => typeof r.result === 'string'));
    assert.equal(prunedCalls, 0, 'no pruned provider is asked what it does not hold');
  });
});
