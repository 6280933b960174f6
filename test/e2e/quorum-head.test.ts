/**
 * The quorum head: three real anvils of one chain behind one network, one of which then mines a branch of
 * its own (a transaction only it has, then 20 more blocks: 21 blocks above the others, before they have a block at
 * its height to compare). With the default quorum of 2, a client reading before, while and after never sees that
 * node's height or its blocks: `eth_blockNumber` is the head the other two share and follows them as they mine,
 * `latest` reads are answered with their blocks and state, a transfer sent meanwhile reaches them, and the node is
 * `forked` in /readyz and down in /metrics. The same nodes behind a gateway with `quorum: 1` (the highest believed
 * head) show the branch's height: the figures of both are printed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** The second account of the test mnemonic, funded in every anvil's genesis: it pays on the branch only. */
const other = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
/** The first account of the test mnemonic: it pays through the gateway while the branch is made. */
const first = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const PAID_TOO = '0x00000000000000000000000000000000000000c1';
/** Paid on the branch only: 0 on the chain the quorum has. */
const PAID = '0x00000000000000000000000000000000000000c0';
const ROUNDS = 200;
const BRANCH_BLOCKS = 20;
const hex = (n: number) => `0x${n.toString(16)}`;

describe('a node mining a branch of its own, 20 blocks above the others', { timeout: 120_000 }, () => {
  let nodes: TestAnvil[];
  let g: TestGateway;
  /** The same nodes with a quorum of 1 (the highest believed head), for comparison. */
  let one: TestGateway;
  let time = 1735689700;
  /** Mines one block on each of `which` with the same timestamp: empty blocks on one parent are the same block. */
  const mine = (which: TestAnvil[]) => {
    time++;
    return Promise.all(which.map((n) => n.call('evm_mine', [{ timestamp: time }])));
  };
  before(async () => {
    nodes = await Promise.all([startAnvil(['--no-mining']), startAnvil(['--no-mining']), startAnvil(['--no-mining'])]);
    const network = { chainId: 1, upstreams: nodes.map((n) => ({ url: n.url })) };
    g = await startTestGateway({ networks: { q: network }, upstreams: { checkIntervalMs: 100 }, cache: { enabled: false } });
    one = await startTestGateway({ networks: { q: network }, upstreams: { checkIntervalMs: 100, quorum: 1 }, cache: { enabled: false } });
  });
  after(async () => {
    for (const n of nodes ?? []) n.stop();
    await g?.close();
    await one?.close();
  });

  test(`over ${ROUNDS} rounds callers see only the blocks two nodes share; the branch's node is forked and answers nothing`, async () => {
    const [a, b, fork] = nodes;
    for (let i = 0; i < 3; i++) await mine(nodes);
    await eventually(() => g.gw.networks.get('q')!.head.number === 3, 10_000, 'the three nodes agree on block 3');
    const chain = g.gw.networks.get('q')!.chain;
    let branchHeight = Infinity;
    let shownBranch = 0;
    let wrongLatest = 0;
    let paidSeen = 0;
    let highest = 0;
    let rounds = 0;
    // A client reads the whole time: before, while and after the third node makes its branch.
    let stop = false;
    const reader = (async () => {
      while (!stop || rounds < ROUNDS) {
        const n = Number(await g.call('eth_blockNumber', [], 'q'));
        const latest = (await g.call('eth_getBlockByNumber', ['latest', false], 'q')) as { number: string; hash: string };
        const paid = BigInt((await g.call('eth_getBalance', [PAID, 'latest'], 'q')) as string);
        const theirs = (await a.call('eth_getBlockByNumber', [latest.number, false])) as { hash: string } | null;
        highest = Math.max(highest, n);
        if (n > Number(await a.call('eth_blockNumber'))) shownBranch++; // a block the two do not have
        if (theirs?.hash !== latest.hash) wrongLatest++;
        if (paid !== 0n) paidSeen++;
        rounds++;
      }
    })();
    // The branch: a transfer only the third node has, in its block 4 (the others' block 4 is empty), then 20 more.
    const raw = await other.signTransaction({
      chainId: 1, type: 'eip1559', nonce: 0, gas: 21_000n, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, to: PAID, value: 1n,
    });
    await fork.call('eth_sendRawTransaction', [raw]);
    // The branch first, 21 blocks above the other two, before they have a block 4 to compare it with.
    await fork.call('evm_mine', [{ timestamp: time + 1 }]);
    await fork.call('anvil_mine', [hex(BRANCH_BLOCKS)]);
    branchHeight = Number(await fork.call('eth_blockNumber'));
    assert.equal(branchHeight, 4 + BRANCH_BLOCKS);
    await new Promise((r) => setTimeout(r, 500)); // the reader goes on meanwhile: 5 rounds of checks
    // A transfer sent through the gateway now, while the branch looks like a node ahead, reaches the other two too.
    const sent = await g.call('eth_sendRawTransaction', [await first.signTransaction({
      chainId: 1, type: 'eip1559', nonce: 0, gas: 21_000n, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, to: PAID_TOO, value: 1n,
    })], 'q') as string;
    await mine([a, b]);
    assert.notEqual((await fork.call('eth_getBlockByNumber', ['0x4', false])).hash, (await a.call('eth_getBlockByNumber', ['0x4', false])).hash);
    await eventually(() => chain.status()[2].state === 'forked', 5000, 'the branch node is marked forked');
    // The two nodes go on mining now and then (still below the branch's height): the head follows them.
    for (let i = 0; i < 5; i++) {
      const at = rounds;
      while (rounds < at + 20) await new Promise((r) => setTimeout(r, 10));
      await mine([a, b]);
    }
    // The reader stops once the gateway has the two nodes' last block and the reader has had rounds to see it.
    const quorumHeight = Number(await a.call('eth_blockNumber'));
    await eventually(() => g.gw.networks.get('q')!.head.number === quorumHeight, 5000, 'the head is the two nodes\' block');
    const seenAt = rounds;
    while (rounds < seenAt + 5) await new Promise((r) => setTimeout(r, 10));
    stop = true;
    await reader;
    const receipt = (await g.call('eth_getTransactionReceipt', [sent], 'q')) as { blockHash: string } | null;
    assert.equal(receipt?.blockHash, ((await a.call('eth_getBlockByNumber', ['0x4', false])) as { hash: string }).hash, 'the transfer sent meanwhile is in the block the two nodes share');

    // The same nodes, a quorum of 1: the highest believed head is the branch's.
    let shownBefore = 0;
    for (let i = 0; i < 50; i++) if (Number(await one.call('eth_blockNumber', [], 'q')) >= branchHeight) shownBefore++;

    const ready = await (await fetch(`${g.url}/readyz`)).json() as { upstreams: Array<{ upstream: string; state: string; error?: string }> };
    const metrics = await (await fetch(`${g.url}/metrics`)).text();
    // The node's label is its URL as configured (a trailing slash added).
    const label = chain.status()[2].upstream;
    const up = [...metrics.matchAll(/^nodegate_upstream_up\{([^}]*)\} (\d)$/gm)].filter((m) => m[1].includes(`upstream="${label}"`)).map((m) => m[2]);
    const forkState = ready.upstreams.find((u) => u.upstream === label);
    console.log(`quorum head: ${rounds} rounds with the branch at ${branchHeight} and the other two at ${quorumHeight}: eth_blockNumber or latest at the branch's height ${shownBranch} times, latest not the two nodes' block ${wrongLatest} times, the branch's transfer seen ${paidSeen} times, highest eth_blockNumber ${highest}; the branch node ${JSON.stringify(forkState)}, nodegate_upstream_up ${up.join(', ')}; with quorum 1: ${shownBefore} of 50 eth_blockNumber at the branch's height`);
    assert.equal(shownBranch, 0, 'no caller is shown the branch\'s height');
    assert.equal(wrongLatest, 0, 'latest is the block the two nodes share');
    assert.equal(paidSeen, 0, 'no state of the branch is answered');
    assert.equal(highest, quorumHeight, 'eth_blockNumber follows the two nodes as they mine');
    assert.equal(forkState?.state, 'forked');
    assert.deepEqual(up, ['0']);
    assert.ok(shownBefore > 0, 'with a quorum of 1 the branch is the head (the fault this test is about is real)');
  });
});
