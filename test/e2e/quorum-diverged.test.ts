/**
 * The quorum head against a node that diverges block by block: three real anvils of one chain behind
 * one network; from block 4 on, two of them mine the same blocks (same timestamps) and the third mines its own at
 * the same heights with other timestamps, so other hashes: sometimes before the two, sometimes after, sometimes a
 * block ahead of them. A newHeads subscriber over WebSocket sees each number once, in order, every hash the two's;
 * `eth_getBlockByNumber('latest')` is always the two's block; the third is `forked` in /readyz and /metrics.
 * Then the quorum cannot be reached: one of the two is killed, so the two left are each on a branch of their own.
 * The node on the chain the network followed goes on alone (the forked one stays out until it agrees again), and
 * when it is killed too, only the forked node is left: the head holds at the last agreed block and calls get
 * -32002 (`latest`, an older block the forked node has under another hash, eth_blockNumber): it answers nothing. The test waits for the notifications and states the gateway reports, never for a time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const STEPS = 12;
const hex = (n: number) => `0x${n.toString(16)}`;

interface Head { number: number; hash: string }

describe('a node that diverges block by block, then the quorum lost', { timeout: 180_000 }, () => {
  let nodes: TestAnvil[];
  let g: TestGateway;
  let ws: WebSocket | undefined;
  /** Ends the reader (also when an assertion failed before the end). */
  let stop = false;
  before(async () => {
    nodes = await Promise.all([startAnvil(['--no-mining']), startAnvil(['--no-mining']), startAnvil(['--no-mining'])]);
    g = await startTestGateway({
      networks: { q: { chainId: 1, upstreams: nodes.map((n) => ({ url: n.url })) } },
      upstreams: { checkIntervalMs: 100 }, cache: { enabled: false },
    });
  });
  after(async () => {
    stop = true;
    ws?.close();
    for (const n of nodes ?? []) n.stop();
    await g?.close();
  });

  test('newHeads: each number once, in order, the quorum\'s hashes; latest the quorum\'s block; the diverged node forked; quorum lost: the agreed chain\'s node alone, then the head holds', async () => {
    const [a, b, c] = nodes;
    const chain = g.gw.networks.get('q')!.chain;
    let time = 1735689700;
    /** Mines one block on each of `which` at the same timestamp: empty blocks on one parent are the same block. */
    const mine = (which: TestAnvil[], at: number) => Promise.all(which.map((n) => n.call('evm_mine', [{ timestamp: at }])));
    for (let i = 0; i < 3; i++) await mine(nodes, ++time);
    await eventually(() => g.gw.networks.get('q')!.head.number === 3, 10_000, 'the three nodes agree on block 3');

    // A newHeads subscriber over the gateway's WebSocket.
    ws = new WebSocket(`${g.url.replace('http', 'ws')}/v1/q/${g.key}`);
    await new Promise((r, j) => { ws!.once('open', r); ws!.once('error', j); });
    const heads: Head[] = [];
    const waiters: Array<{ n: number; done: () => void }> = [];
    const subscribed = new Promise<void>((resolve) => {
      ws!.on('message', (m) => {
        const msg = JSON.parse(String(m));
        if (msg.id === 1) return resolve();
        if (msg.method !== 'eth_subscription') return;
        const h = { number: Number(msg.params.result.number), hash: msg.params.result.hash as string };
        heads.push(h);
        for (const w of waiters.filter((x) => h.number >= x.n)) w.done();
      });
    });
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
    await subscribed;
    /** Resolves once the subscriber was told of block `n` (fails the test after 20 s rather than hang). */
    const told = (n: number) => (heads.some((h) => h.number >= n) ? Promise.resolve() : new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`newHeads never told block ${n}; told ${JSON.stringify(heads.map((h) => h.number))}`)), 20_000);
      waiters.push({ n, done: () => { clearTimeout(t); resolve(); } });
    }));

    // A reader the whole time: latest through the gateway against the block the first node has at that number.
    let compare = true;
    let wrongLatest = 0;
    let wentBack = 0;
    let refused = 0;
    let reads = 0;
    let shown = 0;
    const reader = (async () => {
      while (!stop) {
        const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['latest', false] }, { network: 'q' });
        reads++;
        if (r.body.error) { refused++; continue; }
        const n = Number(r.body.result.number);
        if (n < shown) wentBack++;
        shown = Math.max(shown, n);
        if (!compare) continue;
        const theirs = (await a.call('eth_getBlockByNumber', [hex(n), false]).catch(() => null)) as { hash: string } | null;
        if (theirs === null && !compare) continue; // the first node was killed while it was asked
        if (theirs?.hash !== r.body.result.hash) {
          wrongLatest++;
          const cs = (await c.call('eth_getBlockByNumber', [hex(n), false]).catch(() => null)) as { hash: string } | null;
          console.log('WRONG', n, r.body.result.hash, 'a', theirs?.hash, 'c', cs?.hash, JSON.stringify(chain.status().map((x) => [x.state, x.head])), g.gw.networks.get('q')!.head.number);
        }
      }
    })();

    // Phase 1: c diverges from block 4 on, at the same heights, before, after, or a block ahead of the two.
    let height = 3;
    let cTime = time + 1_000_000;
    for (let i = 0; i < STEPS; i++) {
      time++;
      if (i % 3 === 1) await mine([c], ++cTime);
      await mine([a, b], time);
      if (i % 3 === 0) await mine([c], ++cTime);
      if (i % 3 === 2) await mine([c], ++cTime).then(() => mine([c], ++cTime)); // one more: c goes a block ahead
      height++;
      await told(height);
    }
    assert.notEqual((await c.call('eth_getBlockByNumber', ['0x4', false])).hash, (await a.call('eth_getBlockByNumber', ['0x4', false])).hash, 'c is on a branch of its own');
    await eventually(() => chain.status()[2].state === 'forked', 10_000, 'the diverged node is forked');
    const ready = await (await fetch(`${g.url}/readyz`)).json() as { upstreams: Array<{ upstream: string; state: string }> };
    const label = chain.status()[2].upstream;
    const metrics = await (await fetch(`${g.url}/metrics`)).text();
    const up = [...metrics.matchAll(/^nodegate_upstream_up\{([^}]*)\} (\d)$/gm)].filter((m) => m[1].includes(`upstream="${label}"`)).map((m) => m[2]);
    assert.equal(ready.upstreams.find((u) => u.upstream === label)?.state, 'forked');
    assert.deepEqual(up, ['0']);
    const phase1Reads = reads;

    // Phase 2: b is killed; a and c are each on a branch of their own, no two nodes agree on a block any more.
    b.stop();
    await eventually(() => ['down', 'unknown'].includes(chain.status()[1].state), 10_000, 'the killed node is down');
    for (let i = 0; i < 4; i++) {
      time++;
      await mine([c], ++cTime).then(() => mine([c], ++cTime)); // c keeps ahead, on its own chain
      await mine([a], time);
      height++;
      await told(height);
    }
    assert.equal(chain.status()[2].state, 'forked', 'the diverged node stays out while it does not agree');

    // Phase 3: a is killed too: only the forked node is left. The head holds; what is at the head is refused.
    const held = g.gw.networks.get('q')!.head.number!;
    compare = false;
    const refusedBefore = refused;
    a.stop();
    await eventually(() => ['down', 'unknown'].includes(chain.status()[0].state), 10_000, 'the second node is down');
    await mine([c], ++cTime);
    await eventually(() => refused > refusedBefore + 20, 20_000, 'latest reads refused while no node of the agreed chain answers');
    const asked = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }, { network: 'q' });
    const blockNumber = asked.body.result === undefined ? asked.body.error?.code : Number(asked.body.result);
    const latest = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['latest', false] }, { network: 'q' });
    // An older block the forked node has under another hash is not answered from it either.
    const older = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['0x5', false] }, { network: 'q' });
    stop = true;
    await reader;

    const numbers = heads.map((h) => h.number);
    const expected = Array.from({ length: height - 3 }, (_, i) => 4 + i);
    // The hashes a had (a is gone: what the subscriber saw is compared with what the reader compared earlier).
    const cHashes = new Set<string>();
    for (let n = 4; n <= height + 8; n++) {
      const blk = (await c.call('eth_getBlockByNumber', [hex(n), false])) as { hash: string } | null;
      if (blk) cHashes.add(blk.hash);
    }
    const fromC = heads.filter((h) => cHashes.has(h.hash)).length;
    console.log(`diverged node: ${phase1Reads} latest reads while it diverged, ${reads} in all, ${wrongLatest} not the quorum's block, ${wentBack} lower than one shown before, ${refusedBefore} refused before only the forked node was left, ${refused} in all; newHeads ${JSON.stringify(numbers)}, ${fromC} of its hashes; with only the forked node left: eth_blockNumber ${blockNumber} (the head held at ${held}), latest ${JSON.stringify(latest.body.error ?? latest.body.result?.number)}, block 5 ${JSON.stringify(older.body.error ?? older.body.result?.hash)}`);
    assert.deepEqual(numbers, expected, 'each number once, in order');
    assert.equal(fromC, 0, 'no hash of the diverged node');
    assert.equal(wrongLatest, 0, 'latest is always the block of the nodes the network follows');
    assert.equal(wentBack, 0);
    assert.equal(blockNumber, -32002, 'eth_blockNumber is not answered by the forked node either (never a lower or another branch\'s)');
    assert.equal(g.gw.networks.get('q')!.head.number, held, 'the head holds at the last agreed block');
    assert.equal(latest.body.error?.code, -32002);
    assert.equal(older.body.error?.code, -32002, `block 5: ${older.text.slice(0, 200)}`);
  });
});
