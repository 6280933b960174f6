/**
 * One upstream, even a fallback, claiming head 10^12 must not take its network over (callers would be shown block
 * `0xe8d4a51000`). Two real anvils and a node on loopback that is the same chain but says its head is 10^12, as
 * the first primary of one network and as the fallback of another: callers never see that block, eth_blockNumber
 * stays on the real chain, and the liar is shown `suspect` in /readyz and down in /metrics.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { eventually } from '../helpers/eventually.ts';
import { startFakeNode, type FakeNode } from '../helpers/fake-node.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const LIE = 1_000_000_000_000; // 0xe8d4a51000

describe('a node claiming head 10^12 does not take its network over', { timeout: 120_000 }, () => {
  let nodes: TestAnvil[];
  let liar: FakeNode;
  let g: TestGateway;
  before(async () => {
    // Two nodes of one chain that mine only when told, the same blocks (as nodes of a real network agree).
    nodes = await Promise.all([startAnvil(['--no-mining']), startAnvil(['--no-mining'])]);
    liar = await startFakeNode(nodes[0].url, { claimHead: LIE });
    g = await startTestGateway({
      networks: {
        liarfirst: { chainId: 1, upstreams: [{ url: `${liar.origin}/` }, { url: nodes[0].url }, { url: nodes[1].url }] },
        liarlast: { chainId: 1, upstreams: [{ url: nodes[0].url }, { url: nodes[1].url }, { url: `${liar.origin}/`, role: 'fallback' }] },
      },
      upstreams: { checkIntervalMs: 100 },
      cache: { enabled: false }, // every read reaches a node
    });
  });
  after(async () => {
    for (const n of nodes ?? []) n.stop();
    await liar?.close();
    await g?.close();
  });

  test('as primary and as fallback: callers see only the real chain; the liar is marked', async () => {
    const liarLabel = `${liar.origin}/`;
    const seen: Record<string, Set<number>> = { liarfirst: new Set(), liarlast: new Set() };
    let wrong = 0;
    let calls = 0;
    for (let round = 1; round <= 5; round++) {
      await Promise.all(nodes.map((n) => n.call('evm_mine', [{ timestamp: 1735689700 + round }])));
      const real = Number(await nodes[0].call('eth_blockNumber'));
      // eth_blockNumber is the block a quorum of nodes has, learnt at the next round of checks (100 ms).
      await eventually(() => ['liarfirst', 'liarlast'].every((k) => g.gw.networks.get(k)!.head.number === real), 5000, `the head reaches block ${real}`);
      for (const network of ['liarfirst', 'liarlast']) {
        for (let i = 0; i < 20; i++) {
          const n = Number(await g.call('eth_blockNumber', [], network));
          // null when `latest` is pinned to a block no node has (such as the liar's head).
          const block = (await g.call('eth_getBlockByNumber', ['latest', false], network)) as { number: string } | null;
          const latest = block ? Number(block.number) : undefined;
          calls += 2;
          seen[network].add(n);
          if (latest !== undefined) seen[network].add(latest);
          if (n !== real || latest === undefined || latest > real) wrong++;
        }
      }
    }
    const liarCalls = liar.calls;
    const ready = await (await fetch(`${g.url}/readyz`)).json() as { upstreams: Array<{ network: string; upstream: string; state: string; error?: string }> };
    const liarStates = ready.upstreams.filter((u) => u.upstream === liarLabel).map((u) => `${u.network} ${u.state}`);
    const metrics = await (await fetch(`${g.url}/metrics`)).text();
    const up = [...metrics.matchAll(/^nodegate_upstream_up\{([^}]*)\} (\d)$/gm)].filter((m) => m[1].includes(`upstream="${liarLabel}"`)).map((m) => m[2]);
    const head = g.gw.networks.get('liarfirst')!.head.number;
    console.log(`lying head: ${calls} calls, ${wrong} not on the real chain; blocks shown ${JSON.stringify(Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, [...v]])))}; agreed head ${head}; liar asked ${liarCalls} times (health checks included); /readyz liar ${liarStates.join(', ')}; nodegate_upstream_up of the liar ${up.join(', ')}`);
    for (const s of Object.values(seen)) assert.ok(![...s].includes(LIE), 'no caller is shown block 10^12');
    assert.equal(wrong, 0, 'eth_blockNumber is the real chain\'s head, latest never above it');
    assert.ok(head! < 100, `the agreed head stays on the real chain (${head})`);
    assert.deepEqual(liarStates, ['liarfirst suspect', 'liarlast suspect']);
    assert.deepEqual(up, ['0', '0']);
  });

  test('the liar stays held back over further rounds of checks, and its status says why', async () => {
    const chain = g.gw.networks.get('liarlast')!.chain;
    for (let i = 0; i < 5; i++) await chain.check();
    console.log(`lying head: liar status ${JSON.stringify(chain.status()[2])}`);
    assert.equal(chain.status()[2].state, 'suspect');
    assert.match(chain.status()[2].error ?? '', /far ahead of the agreed head/);
    assert.ok((chain.head.number ?? 0) < 100);
  });
});
