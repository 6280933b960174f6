import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Upstream, UpstreamAnswer } from '../upstream/upstream.ts';
import { learnt, oldestHeld, probed } from './holdings.ts';
import { HoldingsProbe } from './holdings-probe.ts';
import { UpstreamMember, type MemberConfig } from './upstream-member.ts';
import { UpstreamPool } from './upstream-pool.ts';

const log = pino({ level: 'silent' });
const HEAD = 1000;
const MISSING = { error: { code: -32000, message: 'missing trie node abab (path ) state 0xcd is not available' } };

/** A node holding state from block `from` on (and everything else), counting its calls. */
class Node implements Upstream {
  calls: string[] = [];
  up = true;
  constructor(readonly label: string, public from: number) {}
  async call(method: string, params: unknown[]): Promise<UpstreamAnswer> {
    this.calls.push(method);
    if (!this.up) throw new GatewayError('UPSTREAM_UNAVAILABLE');
    const n = Number(params[1]);
    return n < this.from ? MISSING : { result: this.label };
  }
  async close(): Promise<void> {}
}

function network(nodes: Node[], configs: Partial<MemberConfig>[] = []) {
  const members = nodes.map((n, i) => {
    const m = new UpstreamMember(n, { role: 'primary', weight: 1, ...configs[i] }, i);
    m.head = HEAD;
    return m;
  });
  const pool = new UpstreamPool(members, { breakerFailures: 1, breakerCooldownMs: 60_000, maxLagBlocks: 2 }, () => HEAD, log, () => 0);
  pool.network = 'mainnet';
  return { members, pool };
}
const at = (n: number) => ({ minBlock: n, oldest: n, needs: 'state' as const });
const balance = (p: UpstreamPool, n: number) => p.call('eth_getBalance', ['0x01', `0x${n.toString(16)}`], 1000, at(n));

describe('holdings: a call at a block goes to a node that holds it', () => {
  test('a sliding window moves with the head; a second probe that finds the oldest block unmoved makes it fixed', () => {
    const h = probed(undefined, 873, 1000);
    assert.equal(oldestHeld(h, 1100), 973);
    assert.equal(oldestHeld(probed(h, 880, 1100), 1200), 880);
    assert.equal(oldestHeld(probed(undefined, 1, 1000), 5000), 0, 'block 1 held: every block');
    assert.equal(learnt(undefined, 50, false, 1000)?.from, 51, 'not held at 50: from 51');
    assert.equal(learnt(h, 800, false, 1000), undefined, 'already known not held');
    assert.equal(learnt(h, 950, false, 1000)?.from, 951, 'said not held inside what was believed: learnt');
  });

  test('configured windows: 1,000 reads at old and recent blocks through two pruned nodes and an archive: every one answered, old ones only by the archive', async () => {
    const pruned = [new Node('p1', 873), new Node('p2', 873)];
    const archive = new Node('archive', 0);
    const { pool } = network([...pruned, archive], [{ stateWindow: 128 }, { stateWindow: 128 }, { archive: true }]);
    let old = 0;
    for (let i = 0; i < 1000; i++) {
      const n = i % 2 === 0 ? i % 800 : HEAD - (i % 100);
      if (n < 873) old++;
      const a = await balance(pool, n);
      assert.equal(a.error, undefined, `block ${n}: ${JSON.stringify(a.error)}`);
      if (n < 873) assert.equal(a.result, 'archive');
    }
    assert.equal(pruned[0].calls.length + pruned[1].calls.length + archive.calls.length, 1000, 'one node call per read');
    assert.ok(archive.calls.length >= old);
  });

  test('unknown windows are learnt from "missing trie node": a node is not asked again below a block it lacked, and the caller never sees its words', async () => {
    const pruned = [new Node('p1', 873), new Node('p2', 873)];
    const archive = new Node('archive', 0);
    const { pool, members } = network([...pruned, archive]);
    // Newest first: what a node lacked at a block it lacks below it too (ascending blocks wait for the probe).
    for (let i = 0; i < 50; i++) assert.equal((await balance(pool, 149 - i)).result, 'archive');
    assert.ok(pruned[0].calls.length <= 1 && pruned[1].calls.length <= 1, `${pruned[0].calls.length} ${pruned[1].calls.length}`);
    pruned.forEach((n, i) => { if (n.calls.length > 0) assert.equal(members[i].holds('state', 100, HEAD), false, `${n.label} said it lacks a block above 100`); });
    assert.equal(members[2].holds('state', 0, HEAD), true);
  });

  test('the archive node down: BLOCK_NOT_HELD naming the blocks the network serves; recent blocks still answered', async () => {
    const pruned = [new Node('p1', 873), new Node('p2', 873)];
    const archive = new Node('archive', 0);
    const { pool } = network([...pruned, archive], [{ stateWindow: 128 }, { stateWindow: 128 }, { archive: true }]);
    archive.up = false;
    await balance(pool, HEAD).catch(() => undefined);
    const called = pruned[0].calls.length + pruned[1].calls.length;
    const refused = await balance(pool, 12).then((a) => a, (e: GatewayError) => ({ error: e.toJSON() }));
    assert.equal(refused.error?.code, -32001);
    assert.equal(refused.error?.message, 'state at block 12 is not held by any node of mainnet: state is served from block 873 on');
    assert.equal(pruned[0].calls.length + pruned[1].calls.length, called, 'no pruned node is asked what it does not hold');
    assert.ok(['p1', 'p2', 'archive'].includes(String((await balance(pool, HEAD - 5)).result)));
  });

  test('the probe finds a pruned node\'s oldest block by binary search in a few dozen reads, and an archive at block 1', async () => {
    const pruned = new Node('p1', 873);
    const archive = new Node('archive', 0);
    // The probe's reads: eth_getBalance for state, eth_getBlockReceipts for history.
    for (const n of [pruned, archive]) {
      const call = n.call.bind(n);
      n.call = async (method, params) => (method === 'eth_getBalance' ? call(method, [params[0], params[1]]) : { result: [] });
    }
    const { pool, members } = network([pruned, archive]);
    for (const m of members) m.reachable = true;
    const probe = new HoldingsProbe(pool, members, 60_000, 1000, log);
    await probe.tick();
    assert.equal(oldestHeld(members[0].holding.state!, HEAD), 873);
    assert.equal(oldestHeld(members[1].holding.state!, HEAD), 0);
    assert.ok(pruned.calls.filter((m) => m === 'eth_getBalance').length <= 12, `${pruned.calls.length} reads`);
    assert.equal(archive.calls.filter((m) => m === 'eth_getBalance').length, 1);
    assert.equal(pool.windowed, true);
    const before = pruned.calls.length;
    await probe.tick(Date.now() + 120_000);
    assert.equal(pruned.calls.length, before, 'nobody called the network: no probe');
  });
});

describe('verified reads in the pool', () => {
  const block = (n: number, hash: string) => ({ number: `0x${n.toString(16)}`, hash, transactions: [] });
  /** A node answering blocks by number: `wrong` answers another block than the one asked. */
  const blocks = (label: string, wrong: boolean) => new (class implements Upstream {
    calls = 0;
    readonly label = label;
    async call(_m: string, params: unknown[]): Promise<UpstreamAnswer> {
      this.calls++;
      const n = Number(params[0]);
      return { result: block(wrong ? n + 1 : n, `0x${'ab'.repeat(32)}`) };
    }
    async close(): Promise<void> {}
  })();

  test('an answer that fails its check is asked of the other node and never passed on; the liar counts it; with no honest node, 503', async () => {
    const { Verifier } = await import('./verify/verifier.ts');
    const honest = blocks('honest', false);
    const liar = blocks('liar', true);
    const members = [liar, honest].map((n, i) => Object.assign(new UpstreamMember(n, { role: i === 0 ? 'primary' : 'fallback', weight: 1 }, i), { head: HEAD }));
    const pool = new UpstreamPool(members, { breakerFailures: 100, breakerCooldownMs: 60_000, maxLagBlocks: 2 }, () => HEAD, log, () => 0);
    const seen: string[] = [];
    pool.onVerifyFailure = (u, c) => seen.push(`${u} ${c}`);
    pool.verifier = new Verifier('cheap', { readBlock: async () => undefined, knownHash: () => undefined, final: () => true });
    // The liar is the primary: asked first every time (its breaker, at 100 failures here, stays closed).
    for (let i = 0; i < 10; i++) {
      const a = await pool.call('eth_getBlockByNumber', ['0x10', false], 1000);
      assert.equal((a.result as { number: string }).number, '0x10');
    }
    assert.deepEqual(members[0].verifyFailures, { 'block-number': 10 });
    assert.equal(seen.length, 10);
    assert.equal(members[1].verifyFailures, undefined);
    const lying = new UpstreamPool([members[0], Object.assign(new UpstreamMember(blocks('liar2', true), { role: 'primary', weight: 1 }, 1), { head: HEAD })], { breakerFailures: 100, breakerCooldownMs: 60_000, maxLagBlocks: 2 }, () => HEAD, log, () => 0);
    lying.verifier = pool.verifier;
    await assert.rejects(lying.call('eth_getBlockByNumber', ['0x10', false], 1000), (e: GatewayError) => e.code === -32002 && /passed verification/.test(e.message));
  });
});
