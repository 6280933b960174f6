// Runs alone (scripts/run-tests.mjs): the readers' p50 while one socket stops reading against quiet (2x).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { encodeFunctionData } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import WebSocket from 'ws';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { compileCounter, counterInitCode } from '../helpers/counter.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * Subscriptions fanned out from the chain module's events. 50 sockets subscribed to newHeads while 1,000
 * blocks are mined see every block number once, in order; a client that stops reading is closed (1008) once what
 * is queued for it passes ws.maxBufferedBytes, while the others go on; a key revoked while its socket is idle
 * closes the socket within about a second. And the same 50 sockets and 1,000 blocks on a network of three anvils,
 * one of them killed (SIGKILL) half-way: still every block once, in order.
 */
const SUBSCRIBERS = 50;
const BLOCKS = 1000;
const STEP = 100;

interface Subscriber { ws: WebSocket; numbers: number[]; closed: Promise<number> }

/** V8's collector, so that heap figures compare live objects, not garbage not yet collected. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

describe('newHeads to 50 sockets over 1,000 blocks; a client that does not read; a key revoked', { timeout: 300_000 }, () => {
  let g: TestGateway;
  let wsUrl: string;

  before(async () => {
    g = await startTestGateway({ rpc: { extraMethods: { mainnet: ['anvil_mine'] } }, ws: { maxBufferedBytes: 65536 }, upstreams: { checkIntervalMs: 50 } });
    wsUrl = `${g.url.replace('http', 'ws')}/v1/mainnet/${g.key}`;
  });
  after(async () => { await g?.close(); });

  const open = (url = wsUrl) => new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });

  /** Subscribes `count` times to newHeads on `ws`; resolves once every id is answered. */
  const subscribe = async (ws: WebSocket, count: number, onHead: (n: number) => void) => {
    const pending = new Map<number, () => void>();
    ws.on('message', (m) => {
      const msg = JSON.parse(String(m));
      if (msg.method === 'eth_subscription') return onHead(Number(msg.params.result.number));
      pending.get(msg.id)?.();
    });
    await Promise.all(Array.from({ length: count }, (_, i) => new Promise<void>((r) => {
      pending.set(i, r);
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_subscribe', params: ['newHeads'] }));
    })));
  };

  test('every subscriber sees each of 1,000 blocks once, in order; the one that stopped reading is closed (1008), the others are not', async () => {
    const start = Number(await g.call('eth_blockNumber'));
    const subs: Subscriber[] = [];
    let allDone!: () => void;
    const done = new Promise<void>((r) => { allDone = r; });
    let finished = 0;
    for (let i = 0; i < SUBSCRIBERS; i++) {
      const ws = await open();
      const s: Subscriber = { ws, numbers: [], closed: new Promise((r) => ws.once('close', (code) => r(code))) };
      await subscribe(ws, 1, (n) => {
        s.numbers.push(n);
        if (n === start + BLOCKS && ++finished === SUBSCRIBERS) allDone();
      });
      subs.push(s);
    }
    // One more socket, 100 subscriptions to newHeads, that stops reading: what is queued for it grows 100 times as
    // fast as for the others, past ws.maxBufferedBytes (64 KiB here) once the kernel's buffers are full.
    const slow = await open();
    const slowClosed = new Promise<number>((r) => slow.once('close', (code) => r(code)));
    await subscribe(slow, 100, () => {});
    (slow as unknown as { _socket: { pause(): void } })._socket.pause();
    const t0 = Date.now();
    for (let mined = 0; mined < BLOCKS; mined += STEP) await g.call('anvil_mine', [`0x${STEP.toString(16)}`]);
    await done;
    const ms = Date.now() - t0;
    const expected = Array.from({ length: BLOCKS }, (_, i) => start + 1 + i);
    for (const [i, s] of subs.entries()) assert.deepEqual(s.numbers, expected, `subscriber ${i}: each block once, in order`);
    // The client reads again: behind what was queued before the bound it finds the server's close frame.
    (slow as unknown as { _socket: { resume(): void } })._socket.resume();
    assert.equal(await slowClosed, 1008, 'the socket that did not read is closed with 1008');
    for (const s of subs) assert.equal(s.ws.readyState, WebSocket.OPEN, 'the others are still open');
    // /metrics counts them: the 51 sockets open, 150 newHeads subscriptions, the notifications, one socket dropped.
    const metrics = await (await fetch(`${g.url}/metrics`)).text();
    const value = (line: RegExp) => Number(metrics.match(line)?.[1]);
    assert.equal(value(/^nodegate_ws_sockets (\d+)$/m), SUBSCRIBERS, 'the dropped socket is no longer counted');
    assert.equal(value(/^nodegate_ws_subscriptions\{kind="newHeads"\} (\d+)$/m), SUBSCRIBERS);
    assert.ok(value(/^nodegate_ws_notifications_total\{kind="newHeads"\} (\d+)$/m) >= SUBSCRIBERS * BLOCKS);
    assert.equal(value(/^nodegate_ws_dropped_total\{reason="not_reading"\} (\d+)$/m), 1);
    console.log(`# ${SUBSCRIBERS} subscribers x ${BLOCKS} blocks: ${SUBSCRIBERS * BLOCKS} notifications in ${ms} ms, every block once and in order; the client that stopped reading closed (1008)`);
    for (const s of subs) s.ws.close();
  });

  test("a subscriber that stops reading is dropped while the others' latency stays within 2x of quiet; memory stays bounded", async () => {
    // Ten readers; each block mined alone, timed from the mine's answer to each reader's notification.
    const readers: WebSocket[] = [];
    const heard = new Map<number, number[]>();
    for (let i = 0; i < 10; i++) {
      const ws = await open();
      await subscribe(ws, 1, (n) => { const at = heard.get(n); if (at) at.push(performance.now()); });
      readers.push(ws);
    }
    /** Mines one block; resolves with the readers' latencies (ms) once all ten have heard of it. */
    const mineOne = async (): Promise<number[]> => {
      const before = Number(await g.call('eth_blockNumber'));
      heard.set(before + 1, []);
      const t0 = performance.now();
      await g.call('anvil_mine', ['0x1']);
      for (let i = 0; i < 400 && heard.get(before + 1)!.length < readers.length; i++) await new Promise((r) => setTimeout(r, 5));
      const at = heard.get(before + 1)!;
      assert.equal(at.length, readers.length, `every reader heard block ${before + 1}`);
      heard.delete(before + 1);
      return at.map((t) => t - t0);
    };
    const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const quiet: number[] = [];
    for (let i = 0; i < 20; i++) quiet.push(...await mineOne());
    const gc = collector();
    gc();
    const memBefore = process.memoryUsage();
    // The socket that stops reading: 100 newHeads subscriptions, its reads paused, until the server drops it (its
    // client cannot see the close while it does not read: the server's count says so).
    const droppedSoFar = async () => Number((await (await fetch(`${g.url}/metrics`)).text()).match(/^nodegate_ws_dropped_total\{reason="not_reading"\} (\d+)$/m)?.[1] ?? 0);
    const droppedBefore = await droppedSoFar();
    const slow = await open();
    const slowClosed = new Promise<number>((r) => slow.once('close', (code) => r(code)));
    await subscribe(slow, 100, () => {});
    (slow as unknown as { _socket: { pause(): void } })._socket.pause();
    const stalled: number[] = [];
    let blocks = 0;
    for (; blocks < 400 && (await droppedSoFar()) === droppedBefore; blocks++) stalled.push(...await mineOne());
    (slow as unknown as { _socket: { resume(): void } })._socket.resume();
    assert.equal(await slowClosed, 1008, 'the socket that stopped reading is closed with 1008');
    gc();
    const memAfter = process.memoryUsage();
    const mb = (n: number) => (n / 1048576).toFixed(1);
    console.log(`# readers' latency p50: quiet ${p50(quiet).toFixed(1)} ms, while a socket of 100 subscriptions did not read ${p50(stalled).toFixed(1)} ms `
      + `(x${(p50(stalled) / p50(quiet)).toFixed(2)}); dropped after ${blocks} blocks; gateway process heap ${mb(memBefore.heapUsed)} -> ${mb(memAfter.heapUsed)} MB, rss ${mb(memBefore.rss)} -> ${mb(memAfter.rss)} MB`);
    assert.ok(p50(stalled) <= 2 * p50(quiet), `the readers' p50 stays within 2x of quiet (${p50(stalled).toFixed(1)} vs ${p50(quiet).toFixed(1)} ms)`);
    // What was queued for the dropped socket is let go with it: the process holds no more than a few MB more.
    assert.ok(memAfter.heapUsed - memBefore.heapUsed < 16 * 1048576, `heap grew ${mb(memAfter.heapUsed - memBefore.heapUsed)} MB`);
    for (const ws of readers) { assert.equal(ws.readyState, WebSocket.OPEN); ws.close(); }
  });

  test('a key revoked while its socket is idle: the socket is closed (1008) within about a second', async () => {
    const account = (await g.gw.keys.resolve(g.key)).account.id;
    const { key, value } = await g.gw.accounts.createKey(account, { name: 'idle socket' });
    const ws = await open(`${g.url.replace('http', 'ws')}/v1/mainnet/${value}`);
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    const t0 = Date.now();
    await g.gw.accounts.revokeKey(key.id);
    assert.equal(await closed, 1008);
    const ms = Date.now() - t0;
    console.log(`# revoked key's idle socket closed in ${ms} ms`);
    assert.ok(ms < 5000, `closed after ${ms} ms`);
  });
});

describe('a reorganisation under a logs subscription (its own embedded chain)', { timeout: 120_000 }, () => {
  let g: TestGateway;
  before(async () => { g = await startTestGateway({ upstreams: { checkIntervalMs: 50 } }); });
  after(async () => { await g?.close(); });

  test('a reorganisation: a logs subscriber gets the dropped log again with removed: true, then the new branch', async () => {
    const node = async (method: string, params: unknown[] = []) => {
      const a = await g.gw.networks.get('mainnet')!.chain.call(method, params, 5000);
      assert.equal(a.error, undefined, `${method}: ${JSON.stringify(a.error)}`);
      return a.result as any;
    };
    const [from] = await g.call('eth_accounts');
    const mined = async (tx: Record<string, string>) => {
      const hash = await g.call('eth_sendTransaction', [{ from, ...tx }]);
      for (;;) {
        const r = await g.call('eth_getTransactionReceipt', [hash]);
        if (r) return r as { blockHash: string; contractAddress: string | null };
        await new Promise((res) => setImmediate(res));
      }
    };
    const counter = (await mined({ data: counterInitCode(0) })).contractAddress!;
    const increment = encodeFunctionData({ abi: compileCounter().abi, functionName: 'increment' });
    const ws = await new Promise<WebSocket>((resolve, reject) => {
      const w = new WebSocket(`${g.url.replace('http', 'ws')}/v1/mainnet/${g.key}`);
      w.once('open', () => resolve(w));
      w.once('error', reject);
    });
    const logs: Array<{ blockHash: string; removed?: boolean }> = [];
    let wake = () => {};
    const arrived = (n: number) => new Promise<void>((resolve) => {
      wake = () => { if (logs.length >= n) resolve(); };
      wake();
    });
    const ack = new Promise<void>((resolve) => ws.on('message', (m) => {
      const msg = JSON.parse(String(m));
      if (msg.id === 1) return resolve();
      if (msg.method === 'eth_subscription') { logs.push(msg.params.result); wake(); }
    }));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['logs', { address: counter }] }));
    await ack;
    const snapshot = await node('evm_snapshot');
    const dropped = await mined({ to: counter, data: increment });
    await arrived(1);
    assert.equal(await node('evm_revert', [snapshot]), true);
    await node('evm_mine');
    // Another gas limit: not the dropped transaction again (its answers may be cached), a new one.
    const kept = await mined({ to: counter, data: increment, gas: '0x30000' });
    await arrived(3);
    assert.deepEqual(logs.map((l) => [l.blockHash, l.removed ?? false]), [[dropped.blockHash, false], [dropped.blockHash, true], [kept.blockHash, false]]);
    ws.close();
  });
});

describe('newHeads to 50 sockets over 1,000 blocks on three upstreams, one killed (SIGKILL) half-way', { timeout: 120_000 }, () => {
  /** The first account of the test mnemonic, funded in every anvil's genesis. */
  const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
  let nodes: TestAnvil[];
  let g: TestGateway;
  before(async () => {
    // Nodes of one chain agree on its blocks: startAnvil gives each block its parent's time + 1 s, so the same
    // transaction makes the same block, under the same hash, on each.
    nodes = await Promise.all([startAnvil(), startAnvil(), startAnvil()]);
    // The operator's defaults otherwise (checks every 500 ms, breaker, hedge).
    g = await startTestGateway({ networks: { trio: { chainId: 1, upstreams: nodes.map((n) => ({ url: n.url })) } } });
  });
  after(async () => {
    for (const n of nodes ?? []) n.stop();
    await g?.close();
  });

  test('every subscriber sees each of 1,000 blocks once, in order, across the kill of the second node after 500', async () => {
    const network = 'trio';
    const start = Number(await g.call('eth_blockNumber', [], network));
    const last = start + BLOCKS;
    const subs: Subscriber[] = [];
    let allDone!: () => void;
    const done = new Promise<void>((r) => { allDone = r; });
    let finished = 0;
    for (let i = 0; i < SUBSCRIBERS; i++) {
      const ws = await new Promise<WebSocket>((resolve, reject) => {
        const w = new WebSocket(`${g.url.replace('http', 'ws')}/v1/${network}/${g.key}`);
        w.once('open', () => resolve(w));
        w.once('error', reject);
      });
      const s: Subscriber = { ws, numbers: [], closed: new Promise((r) => ws.once('close', (code) => r(code))) };
      await new Promise<void>((resolve) => {
        ws.on('message', (m) => {
          const msg = JSON.parse(String(m));
          if (msg.id === 0) return resolve();
          const n = Number(msg.params.result.number);
          s.numbers.push(n);
          if (n === last && ++finished === SUBSCRIBERS) allDone();
        });
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'eth_subscribe', params: ['newHeads'] }));
      });
      subs.push(s);
    }
    // The second node is killed, not the first: the first is the designated node (evm_*, anvil_* go to it alone),
    // and the point is a node the blocks come from, not the network's one control node.
    const killed = 1;
    let live = nodes;
    const t0 = Date.now();
    for (let nonce = 0; nonce < BLOCKS; nonce++) {
      if (nonce === BLOCKS / 2) {
        nodes[killed].proc.kill('SIGKILL');
        live = nodes.filter((_, i) => i !== killed);
      }
      const raw = await account.signTransaction({
        chainId: 1, type: 'eip1559', nonce, gas: 21_000n, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n,
        to: '0x00000000000000000000000000000000000000b0', value: 1n,
      });
      // One transfer a block, broadcast by the gateway to every usable primary: each anvil mines it in the same
      // block. The next is sent once each live node has mined this one, so that none gets two in one block.
      const hash = await g.call('eth_sendRawTransaction', [raw], network);
      await Promise.all(live.map(async (n) => {
        // A node the broadcast skipped (not usable at that moment) never gets it: say so, rather than wait forever.
        for (const end = Date.now() + 5000; !(await n.call('eth_getTransactionReceipt', [hash]));) {
          if (Date.now() > end) assert.fail(`transaction ${nonce} not on node ${nodes.indexOf(n) + 1} within 5 s; upstreams: ${JSON.stringify(g.gw.networks.get(network)!.chain.status())}`);
          await new Promise((r) => setImmediate(r));
        }
      }));
    }
    const sentMs = Date.now() - t0;
    // Bounded, so that a block missed (a gap: `done` never comes) still ends in the figures and the assertion below.
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise((r) => { bound = setTimeout(r, 15_000); })]);
    clearTimeout(bound);
    const ms = Date.now() - t0;
    const expected = Array.from({ length: BLOCKS }, (_, i) => start + 1 + i);
    let duplicates = 0;
    let gaps = 0;
    let outOfOrder = 0;
    for (const s of subs) {
      const counts = new Map<number, number>();
      for (const n of s.numbers) counts.set(n, (counts.get(n) ?? 0) + 1);
      for (const c of counts.values()) duplicates += c - 1;
      for (const n of expected) if (!counts.has(n)) gaps++;
      for (let i = 1; i < s.numbers.length; i++) if (s.numbers[i] <= s.numbers[i - 1]) outOfOrder++;
    }
    const states = g.gw.networks.get(network)!.chain.status().map((u) => u.state);
    console.log(`# three upstreams, node ${killed + 1} killed (SIGKILL) after block ${start + BLOCKS / 2}: ${SUBSCRIBERS} subscribers x ${BLOCKS} blocks, ${subs.reduce((a, s) => a + s.numbers.length, 0)} notifications; ${duplicates} duplicates, ${gaps} gaps, ${outOfOrder} out of order; blocks sent in ${sentMs} ms, all heard in ${ms} ms; upstreams afterwards: ${states.join(', ')}`);
    for (const [i, s] of subs.entries()) assert.deepEqual(s.numbers, expected, `subscriber ${i}: each block once, in order`);
    assert.equal(states[killed], 'down', 'the killed node is shown down');
    for (const s of subs) s.ws.close();
  });
});

describe('notifications cost compute units (ws.newHeadsEventUnits)', { timeout: 60_000 }, () => {
  let g: TestGateway;
  before(async () => {
    // An event dearer than everything else the test does, so that the quota's change is the notifications'.
    g = await startTestGateway({ rpc: { extraMethods: { mainnet: ['anvil_mine'] } }, ws: { newHeadsEventUnits: 1000 } });
  });
  after(async () => { await g?.close(); });

  test("each newHeads notification delivered adds its units to the account's monthly quota", async () => {
    const used = async () => {
      const res = await fetch(`${g.url}/api/v1/analytics`, { headers: { authorization: `Bearer ${g.key}` } });
      return (await res.json() as { quota: { used: number } }).quota.used;
    };
    const ws = new WebSocket(`${g.url.replace('http', 'ws')}/v1/mainnet/${g.key}`);
    await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
    const heads: number[] = [];
    let answered = 0;
    ws.on('message', (m) => {
      const msg = JSON.parse(String(m));
      if (msg.method === 'eth_subscription') heads.push(Number(msg.params.result.number));
      else answered++;
    });
    // Two subscriptions on the socket: each block is two notifications.
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['newHeads'] }));
    for (let i = 0; i < 200 && answered < 2; i++) await new Promise((r) => setTimeout(r, 10));
    const before = await used();
    await g.call('anvil_mine', ['0x5']);
    for (let i = 0; i < 500 && heads.length < 10; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(heads.length, 10, 'five blocks, two subscriptions: ten notifications');
    const after = await used();
    console.log(`# quota used: ${before} -> ${after} units for 10 newHeads notifications at 1,000 units each (and one anvil_mine call)`);
    // The notifications' 10,000 units, and the few units of the calls made meanwhile (anvil_mine, the analytics reads).
    assert.ok(after - before >= 10_000 && after - before < 10_500, `quota grew by ${after - before}`);
    ws.close();
  });
});
