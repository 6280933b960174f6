/**
 * Idle networks (docs/architecture.md, "Node health"): a network of nodes by URL that nobody called for
 * `upstreams.idleAfterMs` is checked every `upstreams.idleCheckMs`, not every `checkIntervalMs`; the first call after
 * that waits for a round and is answered from the node's head as it is then, not as the last idle round saw it. A
 * gateway set never to slow down (0) checks every round throughout, as the control.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startSyntheticChain, type SyntheticChain } from '../helpers/synthetic-chain.ts';

const CHECK_MS = 50;
const IDLE_MS = 3000;
const IDLE_AFTER_MS = 500;

describe('idle networks are checked less often, and a call after idle sees a fresh head', { timeout: 60_000 }, () => {
  let idle: SyntheticChain;
  let busy: SyntheticChain;
  let g: TestGateway;
  let control: TestGateway;
  before(async () => {
    // Heads that move only when the test moves them.
    [idle, busy] = await Promise.all([startSyntheticChain({ head: 100, blockMs: 3_600_000 }), startSyntheticChain({ head: 100, blockMs: 3_600_000 })]);
    g = await startTestGateway({ upstreams: { checkIntervalMs: CHECK_MS, idleCheckMs: IDLE_MS, idleAfterMs: IDLE_AFTER_MS }, networks: { quiet: { chainId: 1, verify: 'off', upstream: idle.url } } });
    // Never slowed down: a round every CHECK_MS whoever calls.
    control = await startTestGateway({ upstreams: { checkIntervalMs: CHECK_MS, idleCheckMs: 0 }, networks: { control: { chainId: 1, verify: 'off', upstream: busy.url } } });
  });
  after(async () => {
    await g?.close();
    await control?.close();
    idle?.close();
    busy?.close();
  });

  test('one second with no caller: the idle network got at most one round, the control twenty; the next call answers the new head', async () => {
    // Both answered once (the quiet network is then idle from its next round on).
    assert.equal(await g.call('eth_blockNumber', [], 'quiet'), '0x64');
    assert.equal(await control.call('eth_blockNumber', [], 'control'), '0x64');
    // Idle once nobody called for IDLE_AFTER_MS.
    await new Promise((r) => setTimeout(r, IDLE_AFTER_MS + 3 * CHECK_MS));
    const [i0, b0] = [idle.calls, busy.calls];
    await new Promise((r) => setTimeout(r, 1000));
    const [quietCalls, controlCalls] = [idle.calls - i0, busy.calls - b0];
    // The node moves on while nobody calls: 50 blocks the idle rounds have not seen.
    idle.head = 150;
    const answered = await g.call('eth_blockNumber', [], 'quiet');
    console.log(`# in 1 s without callers: idle network ${quietCalls} node calls, control ${controlCalls}; first call after idle answered ${Number(answered)} (node at 150)`);
    assert.ok(controlCalls >= 10, `the control network is checked every ${CHECK_MS} ms (${controlCalls} calls)`);
    assert.ok(quietCalls <= 2, `the idle network is checked every ${IDLE_MS} ms at most once in this second (${quietCalls} calls)`);
    assert.equal(answered, '0x96', "the first call after idle answers the node's head now");
  });
});
