import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { openWs, type WsClient } from '../helpers/ws-client.ts';

/**
 * newHeads from the nodes' own pushes: three anvils, each with its WebSocket (upstreams[].ws), and the gateway's
 * rounds of checks a minute apart, so that a subscriber hears of blocks from the nodes' pushes alone. The node the
 * gateway reads blocks from (the first) is killed (SIGKILL) half-way: each block is still heard once and in order.
 */
const BLOCKS = 200;

describe('newHeads pushed by the nodes over a pool of three anvils, the node in use killed (SIGKILL) half-way', { timeout: 120_000 }, () => {
  let nodes: TestAnvil[];
  let g: TestGateway;
  before(async () => {
    // One genesis and each block at its parent's time + 1 s (startAnvil): the same evm_mine on each node makes the
    // same block, under the same hash, as nodes of one chain have.
    nodes = await Promise.all([startAnvil(), startAnvil(), startAnvil()]);
    g = await startTestGateway({
      networks: { trio: { chainId: 1, upstreams: nodes.map((n) => ({ url: n.url, ws: n.url.replace('http', 'ws') })) } },
      upstreams: { checkIntervalMs: 60_000 },
    });
  });
  after(async () => {
    for (const n of nodes ?? []) n.stop();
    await g?.close();
  });

  test('every block once, in order, with no round of checks, across the kill of the node in use', async () => {
    const chain = g.gw.networks.get('trio')!.chain;
    await eventually(() => chain.status().every((s) => s.socket === 'open'), 10_000, "every node's WebSocket open");
    const start = Number(await g.call('eth_blockNumber', [], 'trio'));
    const last = start + BLOCKS;
    const client: WsClient = await openWs(`${g.url.replace('http', 'ws')}/v1/trio/${g.key}`);
    const numbers: number[] = [];
    let heardLast!: () => void;
    const done = new Promise<void>((r) => { heardLast = r; });
    client.ws.on('message', (m) => {
      const msg = JSON.parse(String(m));
      if (msg.method !== 'eth_subscription') return;
      const n = Number(msg.params.result.number);
      numbers.push(n);
      if (n === last) heardLast();
    });
    assert.equal(typeof (await client.ask('eth_subscribe', ['newHeads'])).result, 'string');
    const killed = 0;
    let live = nodes;
    for (let i = 0; i < BLOCKS; i++) {
      if (i === BLOCKS / 2) {
        nodes[killed].proc.kill('SIGKILL');
        live = nodes.filter((_, k) => k !== killed);
      }
      // Each live node mines the block (the same block on each), straight, not through the gateway.
      await Promise.all(live.map((n) => n.call('evm_mine')));
    }
    // Bounded, so that a block missed (`done` never comes) still ends in the counts and assertions below.
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise((r) => { bound = setTimeout(r, 15_000); })]);
    clearTimeout(bound);
    const counts = new Map<number, number>();
    for (const n of numbers) counts.set(n, (counts.get(n) ?? 0) + 1);
    const expected = Array.from({ length: BLOCKS }, (_, i) => start + 1 + i);
    const missed = expected.filter((n) => !counts.has(n)).length;
    const repeated = [...counts.values()].reduce((a, c) => a + c - 1, 0);
    console.log(`# ${BLOCKS} blocks, node ${killed + 1} of 3 killed after block ${start + BLOCKS / 2}: ${numbers.length} heads heard, ${missed} missed, ${repeated} repeated`);
    assert.equal(missed, 0, 'no head missed');
    assert.equal(repeated, 0, 'no head repeated');
    assert.deepEqual(numbers, expected, 'each block once, in order');
    client.ws.close();
  });
});
