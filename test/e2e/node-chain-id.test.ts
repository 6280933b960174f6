/**
 * A node's chain id and its return (docs/architecture.md, "Node health"), through the gateway with readers running
 * the whole time: a node of another chain answers no caller, neither at start (a node slow to answer its first
 * check) nor after the node behind a URL is replaced by one of another chain; a node that was down is used again
 * within 2 s of answering, also while another node is stalled with a 10 s time-out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startSwitchNode, type SwitchNode } from '../helpers/switch-node.ts';
import type { Chain } from '../../src/chain/chain.ts';

const ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const COUNTED = new Set(['eth_getBalance']);
/** The balance ADDRESS has on the chain-5 node only: an answer with it was served by that node. */
const WRONG_BALANCE = '0x5';

/** Readers of the gateway until `stop()`; errors and answers of the chain-5 node are kept. */
function readers(g: TestGateway, network: string, n: number) {
  let stopped = false;
  const errors: string[] = [];
  const wrong: number[] = [];
  let reads = 0;
  const loops = Array.from({ length: n }, async () => {
    while (!stopped) {
      const r = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [ADDRESS, 'latest'] }, { network });
      reads++;
      if (r.status !== 200 || r.body?.error) errors.push(`${r.status} ${JSON.stringify(r.body?.error)}`);
      else if (r.body.result === WRONG_BALANCE) wrong.push(reads);
    }
  });
  return { errors, wrong, get reads() { return reads; }, stop: async () => { stopped = true; await Promise.all(loops); } };
}

/** Resolves when the chain module says upstream `label` is in `state` (its own event). */
const stateOf = (chain: Chain, label: string, state: string) => new Promise<void>((resolve) => {
  const seen = (s: { upstream: string; state: string }) => {
    if (s.upstream === label && s.state === state) { chain.off('upstream', seen); resolve(); }
  };
  chain.on('upstream', seen);
});

/** Polls until `check` holds; the ms it took, or a failure after `ms`. */
async function within(ms: number, check: () => boolean, what: string): Promise<number> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > ms) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return Date.now() - t0;
}

describe('a node of another chain serves no call', { timeout: 60_000 }, () => {
  let right: TestAnvil;
  let wrong: TestAnvil;
  let swapped: SwitchNode;
  let late: SwitchNode;
  let g: TestGateway;
  before(async () => {
    [right, wrong] = await Promise.all([startAnvil(), startAnvil([], 5)]);
    // The other chain is longer: it has every block the network's head names, so nothing but its chain id tells it.
    await right.call('anvil_mine', ['0x5']);
    await wrong.call('anvil_mine', ['0x40']);
    await wrong.call('anvil_setBalance', [ADDRESS, WRONG_BALANCE]);
    swapped = await startSwitchNode(right.url, COUNTED);
    late = await startSwitchNode(wrong.url, COUNTED);
    // A node of another chain that does not answer its first checks: its chain id is unknown when callers come.
    late.mode = 'hang';
    g = await startTestGateway({
      networks: { ids: { chainId: 1, upstreams: [{ url: swapped.url }, { url: right.url }, { url: late.url, timeoutMs: 1000 }] } },
      cache: { enabled: false }, // every read reaches a node
    });
  });
  after(async () => {
    await g?.close();
    await swapped?.close();
    await late?.close();
    right?.stop();
    wrong?.stop();
  });

  test('at start, and after the node behind a URL is replaced by one of another chain: 0 calls served by it', async () => {
    const chain = g.gw.networks.get('ids')!.chain;
    const r = readers(g, 'ids', 4);
    // The late node answers at last: refused, having served no one.
    const lateRefused = stateOf(chain, chain.status()[2].upstream, 'refused');
    late.mode = 'up';
    await lateRefused;
    const atStart = r.wrong.length;

    // The node behind the first URL is replaced by a node of chain 5 (a new process: its connections drop).
    const refused = stateOf(chain, chain.status()[0].upstream, 'refused');
    const readsBefore = r.reads;
    swapped.target = wrong.url;
    swapped.dropConnections();
    await refused;
    await within(10_000, () => r.reads > readsBefore + 200, '200 reads after the swap');
    const afterSwap = r.wrong.length - atStart;

    // Fixed: the network's node is back behind the URL, and is used again.
    const fixedAt = swapped.served.get(right.url) ?? 0;
    swapped.target = right.url;
    swapped.dropConnections();
    const backMs = await within(2000, () => (swapped.served.get(right.url) ?? 0) > fixedAt, 'the fixed node serves again');
    await r.stop();
    const asked = (late.served.get(wrong.url) ?? 0) + (swapped.served.get(wrong.url) ?? 0);
    console.log(`# wrong chain id: ${r.reads} reads; answers of the node of chain 5 to callers: ${atStart} at start, ${afterSwap} after the swap (it answered ${asked} node requests, none passed on); fixed: used again after ${backMs} ms; ${r.errors.length} errors`);
    assert.equal(atStart, 0, 'no call served by a node whose chain id was unknown, then wrong');
    assert.equal(afterSwap, 0, 'no call served by the node of another chain after the swap');
    assert.deepEqual(r.errors.slice(0, 5), [], 'no reader saw an error');
  });
});

describe('a fixed node is used again within 2 s (default checks and breaker)', { timeout: 60_000 }, () => {
  let anvil: TestAnvil;
  let fixed: SwitchNode;
  let stalled: SwitchNode;
  let g: TestGateway;
  before(async () => {
    anvil = await startAnvil();
    fixed = await startSwitchNode(anvil.url, COUNTED);
    stalled = await startSwitchNode(anvil.url, COUNTED);
    g = await startTestGateway({
      // The operator's defaults (checks every 500 ms, a breaker open 5 s); the third node's calls may take 10 s.
      networks: { back: { chainId: 1, upstreams: [{ url: fixed.url }, { url: anvil.url }, { url: stalled.url, timeoutMs: 10_000 }] } },
      cache: { enabled: false },
    });
  });
  after(async () => {
    await g?.close();
    await fixed?.close();
    await stalled?.close();
    anvil?.stop();
  });

  test('down for 3 s while another node is stalled, then fixed: it serves again within 2 s', async () => {
    const chain = g.gw.networks.get('back')!.chain;
    const r = readers(g, 'back', 4);
    await within(5000, () => (fixed.served.get(anvil.url) ?? 0) > 0, 'the first node serves');
    const down = stateOf(chain, chain.status()[0].upstream, 'down');
    fixed.mode = 'down';
    stalled.mode = 'hang';
    await down;
    await new Promise((res) => setTimeout(res, 3000)); // its breaker stays open, re-opened at each failed probe
    const before = fixed.served.get(anvil.url) ?? 0;
    fixed.mode = 'up';
    const backMs = await within(2000, () => (fixed.served.get(anvil.url) ?? 0) > before, 'the fixed node serves again');
    await r.stop();
    // Readers' errors are printed, not asserted: a read whose first node stalls while its hedge meets the node just
    // gone down waits for the stalled one (hedged-read.ts `hedged` tries one other node), which is not this test's.
    console.log(`# fixed node: used again ${backMs} ms after it answers (checks every 500 ms, breaker 5 s, a node stalled with a 10 s time-out); ${r.reads} reads, ${r.errors.length} errors ${r.errors.slice(0, 2).join('; ')}`);
    assert.ok(backMs < 2000);
  });
});
