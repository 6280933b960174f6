import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { GatewayError } from '../errors/gateway-error.ts';
import type { CallSignal } from '../errors/on-abort.ts';
import type { Due } from '../background/coarse-clock.ts';
import { NodeHttpError, type Upstream, type UpstreamAnswer } from '../upstream/upstream.ts';
import { UpstreamMember, type HealthPolicy, type MemberConfig } from './upstream-member.ts';
import { UpstreamPool } from './upstream-pool.ts';

const log = pino({ level: 'silent' });
const policy: HealthPolicy = { breakerFailures: 3, breakerCooldownMs: 60_000, maxLagBlocks: 2 };
/** The pools' clock: breakers and rests are read at instants the tests name, never at the real time. */
const T0 = 1_700_000_000_000;
const clock = () => T0;

/** A node that answers by a function the test sets, and counts the calls it got. */
class FakeNode implements Upstream {
  calls: string[] = [];
  constructor(readonly label: string, public answer: (method: string, params: unknown[]) => UpstreamAnswer | Promise<UpstreamAnswer>) {}
  async call(method: string, params: unknown[]): Promise<UpstreamAnswer> {
    this.calls.push(method);
    return this.answer(method, params);
  }
  async close(): Promise<void> {}
}

const ok = (label: string) => new FakeNode(label, () => ({ result: label }));
const down = (label: string) => new FakeNode(label, () => { throw new GatewayError('UPSTREAM_UNAVAILABLE'); });

function pool(nodes: FakeNode[], roles: Partial<MemberConfig>[] = [], heads: (number | undefined)[] = []) {
  const members = nodes.map((n, i) => {
    const m = new UpstreamMember(n, { role: 'primary', weight: 1, ...roles[i] }, i);
    m.head = heads[i];
    return m;
  });
  const best = () => Math.max(...members.map((m) => m.head ?? -1));
  return { members, pool: new UpstreamPool(members, policy, () => (best() < 0 ? undefined : best()), log, clock) };
}

describe('upstream pool: reads', () => {
  test('a forked node is never the last resort: with the other node down, a read fails rather than get its branch', async () => {
    const forked = ok('forked');
    const { pool: p, members } = pool([down('dead'), forked], [], [10, 12]);
    members[1].forked = true;
    await assert.rejects(p.call('eth_getBalance', ['0x1', '0x5'], 1000), (e: GatewayError) => e.code === -32002);
    assert.equal(forked.calls.length, 0);
  });

  test('one read without an answer in its time opens the breaker at once (a stalled node); a trace that runs out of time does not', async () => {
    const stalled = new FakeNode('stalled', () => { throw new GatewayError('UPSTREAM_TIMEOUT'); });
    const other = ok('other');
    // The stalled node is the primary, so the first read goes to it.
    const { pool: p, members } = pool([stalled, other], [{}, { role: 'fallback' }]);
    const first = await p.call('eth_getBalance', ['0x1', 'latest'], 1000);
    assert.deepEqual(first, { result: 'other' }, 'the read is answered by the other node');
    assert.equal(members[0].breaker(T0), 'open', 'one time-out opened it');
    for (let i = 0; i < 20; i++) await p.call('eth_getBalance', ['0x1', 'latest'], 1000);
    assert.equal(stalled.calls.length, 1, 'the stalled node took no read after its time-out');
    const slowTrace = new FakeNode('slow', (m) => { if (m.startsWith('debug_')) throw new GatewayError('UPSTREAM_TIMEOUT'); return { result: 'slow' }; });
    const { pool: q, members: qm } = pool([slowTrace, ok('b')], [{}, { role: 'fallback' }]);
    await q.call('debug_traceTransaction', ['0xab'], 1000).catch(() => undefined);
    assert.equal(slowTrace.calls.length, 1);
    assert.notEqual(qm[0].breaker(T0), 'open', "a trace's time-out is the caller's heavy work, not the node's health");
  });

  test("a null from a node behind another (a receipt it has not seen yet) is asked of the node ahead; the front's null stands", async () => {
    const receipt = { transactionHash: '0xab', blockNumber: '0xc' };
    const behind = new FakeNode('behind', () => ({ result: null }));
    const ahead = new FakeNode('ahead', () => ({ result: receipt }));
    // The primary is 2 blocks behind the fallback (within maxLagBlocks: it still takes reads).
    const { pool: p } = pool([behind, ahead], [{}, { role: 'fallback' }], [10, 12]);
    assert.deepEqual(await p.call('eth_getTransactionReceipt', ['0xab'], 1000), { result: receipt });
    assert.deepEqual(await p.call('eth_getBlockByHash', ['0xcd', false], 1000), { result: receipt });
    // A null by number is not a lookup by hash: the node's answer.
    assert.deepEqual(await p.call('eth_getBlockByNumber', ['0x5', false], 1000), { result: null });
    const { pool: level } = pool([new FakeNode('a', () => ({ result: null })), ahead], [{}, { role: 'fallback' }], [12, 12]);
    const before = ahead.calls.length;
    assert.deepEqual(await level.call('eth_getTransactionReceipt', ['0xab'], 1000), { result: null }, 'no node ahead: the null is the answer');
    assert.equal(ahead.calls.length, before);
  });

  test('a transaction still pending on a node behind another (mined on the node ahead) is asked of the node ahead', async () => {
    const mined = { hash: '0xab', blockNumber: '0xc', blockHash: '0xbb' };
    const behind = new FakeNode('behind', () => ({ result: { hash: '0xab', blockNumber: null, blockHash: null } }));
    const ahead = new FakeNode('ahead', () => ({ result: mined }));
    const { pool: p } = pool([behind, ahead], [{}, { role: 'fallback' }], [10, 12]);
    assert.deepEqual(await p.call('eth_getTransactionByHash', ['0xab'], 1000), { result: mined });
  });

  test('a read that gets no answer from one upstream is sent once to another; the caller sees only the answer', async () => {
    const [a, b] = [down('a'), ok('b')];
    const { pool: p } = pool([a, b]);
    for (let i = 0; i < 20; i++) assert.deepEqual(await p.call('eth_getBalance', ['0x1', 'latest'], 1000), { result: 'b' });
    assert.ok(a.calls.length <= 3, `the failing upstream was left alone once its breaker opened (${a.calls.length} calls)`);
  });

  test("a node's JSON-RPC error is the caller's answer: never retried elsewhere", async () => {
    const a = new FakeNode('a', () => ({ error: { code: 3, message: 'execution reverted' } }));
    const b = new FakeNode('b', () => ({ error: { code: 3, message: 'execution reverted' } }));
    const { pool: p } = pool([a, b]);
    const answer = await p.call('eth_call', [{}, 'latest'], 1000);
    assert.equal(answer.error?.code, 3);
    assert.equal(a.calls.length + b.calls.length, 1);
  });

  test('a node answering 429 is retried elsewhere and then rested for its Retry-After', async () => {
    const a = new FakeNode('a', () => { throw new NodeHttpError(429, 30_000); });
    const b = ok('b');
    // The node answering 429 is the primary, so every read goes to it first unless it is rested.
    const { pool: p, members } = pool([a, b], [{}, { role: 'fallback' }]);
    for (let i = 0; i < 10; i++) assert.deepEqual(await p.call('eth_chainId', [], 1000), { result: 'b' });
    assert.equal(a.calls.length, 1, 'asked once, then left alone while it asked to be');
    assert.equal(members[0].usable(undefined, policy, T0 + 29_999), false);
    assert.equal(members[0].usable(undefined, policy, T0 + 30_000), true, 'usable again once its Retry-After is over');
  });

  test("a node missing data is passed over for another, and its breaker stays as it was (a half-open trial ends)", async () => {
    const a = new FakeNode('a', () => ({ error: { code: -32000, message: 'header not found' } }));
    const b = ok('b');
    const { pool: p, members } = pool([a, b], [{}, { role: 'fallback' }]);
    for (let i = 0; i < 10; i++) assert.deepEqual(await p.call('eth_getBalance', ['0x1', '0x5'], 1000), { result: 'b' });
    assert.equal(a.calls.length, 10, 'still asked first every time: not marked down');
    assert.equal(members[0].breaker(), 'closed');
    // Alone, its answer is the caller's.
    const { pool: alone } = pool([a]);
    assert.equal((await alone.call('eth_getBalance', ['0x1', '0x5'], 1000)).error?.message, 'header not found');
    // A half-open trial answered "missing data" lets the next call through.
    const m = members[0];
    const t0 = T0;
    for (let i = 0; i < 3; i++) p.failed(m, new GatewayError('UPSTREAM_UNAVAILABLE'));
    m.starting(t0 + 60_000);
    assert.equal(m.usable(undefined, policy, t0 + 60_000), false);
    a.answer = () => ({ error: { code: -32000, message: 'missing trie node' } });
    const trial = new UpstreamPool([m], policy, () => undefined, log, () => t0 + 60_000);
    await trial.via(m, 'eth_getBalance', ['0x1', '0x5'], 1000);
    assert.equal(m.usable(undefined, policy, t0 + 60_000), true);
  });

  test("a node's -32005 is its 'not now': retried on another, and it rests (the error's backoff hint, else 1 s)", async () => {
    const a = new FakeNode('a', () => ({ error: { code: -32005, message: 'project ID request rate exceeded', data: { rate: { backoff_seconds: 30 } } } }));
    const b = ok('b');
    const { pool: p, members } = pool([a, b]);
    for (let i = 0; i < 10; i++) assert.deepEqual(await p.call('eth_getBalance', ['0x1', 'latest'], 1000), { result: 'b' });
    assert.equal(a.calls.length, 1);
    assert.equal(members[0].resting(T0 + 29_999), true);
    assert.equal(members[0].resting(T0 + 30_000), false);
  });

  test("a node error's stack does not reach the caller", async () => {
    const a = new FakeNode('a', () => ({ error: { code: -32000, message: 'nonce too low', data: { stack: 'Error at /srv/ganache/lib.js:1:1' } } }));
    const { pool: p } = pool([a]);
    assert.deepEqual(await p.call('eth_getBalance', ['0x1', 'latest'], 1000), { error: { code: -32000, message: 'nonce too low', data: {} } });
  });

  test('an upstream more than maxLagBlocks behind the best head is skipped; within the bound it is used', async () => {
    const [a, b, c] = [ok('a'), ok('b'), ok('c')];
    const { pool: p } = pool([a, b, c], [], [100, 99, 90]);
    for (let i = 0; i < 60; i++) await p.call('eth_getBalance', ['0x1', 'latest'], 1000);
    assert.equal(c.calls.length, 0, 'the lagging one got nothing');
    assert.ok(a.calls.length > 0 && b.calls.length > 0, 'both others took reads');
  });

  test('a call at a block a lagging upstream has may go to it: its lag matters only for the newest blocks', async () => {
    const [a, b, c] = [ok('a'), ok('b'), ok('c')];
    const { pool: p } = pool([a, b, c], [], [100, 99, 90]);
    for (let i = 0; i < 60; i++) await p.call('eth_getBlockByNumber', ['0x32', false], 1000, { minBlock: 50 });
    assert.ok(c.calls.length > 0, 'the lagging one took some of the calls at block 50');
    const before = c.calls.length;
    for (let i = 0; i < 30; i++) await p.call('eth_getBlockByNumber', ['0x5f', false], 1000, { minBlock: 95 });
    assert.equal(c.calls.length, before, 'none at block 95, above its head');
  });

  test('a call pinned to a block goes to an upstream that has it', async () => {
    const [a, b] = [ok('a'), ok('b')];
    const { pool: p } = pool([a, b], [], [100, 101]);
    for (let i = 0; i < 20; i++) await p.call('eth_getBlockByNumber', ['0x65', false], 1000, { minBlock: 101 });
    assert.deepEqual([a.calls.length, b.calls.length], [0, 20]);
  });

  test('fallbacks take reads only when no primary is usable; dedicated upstreams only for dedicated keys', async () => {
    const [a, f, d] = [ok('a'), ok('f'), ok('d')];
    const { pool: p, members } = pool([a, f, d], [{}, { role: 'fallback' }, { role: 'dedicated' }]);
    for (let i = 0; i < 5; i++) await p.call('eth_chainId', [], 1000);
    assert.deepEqual([a.calls.length, f.calls.length, d.calls.length], [5, 0, 0]);
    for (let i = 0; i < 5; i++) await p.call('eth_chainId', [], 1000, { dedicated: true });
    assert.equal(d.calls.length, 5);
    members[0].refused = true;
    await p.call('eth_chainId', [], 1000);
    assert.equal(f.calls.length, 1);
  });

  test('a breaker opens after breakerFailures failures in a row, lets one trial through after the cool-down, closes on success', async () => {
    const a = down('a');
    const m = new UpstreamMember(a, { role: 'primary', weight: 1 }, 0);
    const p = new UpstreamPool([m, new UpstreamMember(ok('b'), { role: 'primary', weight: 1 }, 1)], { ...policy, breakerCooldownMs: 1000 }, () => undefined, log, clock);
    const t0 = T0;
    for (let i = 0; i < 3; i++) p.failed(m, new GatewayError('UPSTREAM_UNAVAILABLE'));
    assert.equal(m.breaker(t0), 'open');
    assert.equal(m.usable(undefined, policy, t0 + 500), false);
    assert.equal(m.breaker(t0 + 1500), 'half-open');
    assert.equal(m.usable(undefined, policy, t0 + 1500), true);
    m.starting(t0 + 1500);
    assert.equal(m.usable(undefined, policy, t0 + 1500), false, 'one trial at a time');
    m.succeeded();
    assert.equal(m.breaker(t0 + 1500), 'closed');
  });
});

describe('upstream pool: writes', () => {
  const RAW = '0x02f86c0180843b9aca00843b9aca0082520894000000000000000000000000000000000000000080808080a0aa';

  test('a raw transaction goes to every usable primary; the first acceptance wins; fallbacks get none', async () => {
    const [a, b, f] = [ok('0xhash'), ok('0xhash'), ok('0xhash')];
    const { pool: p } = pool([a, b, f], [{}, {}, { role: 'fallback' }]);
    assert.deepEqual(await p.call('eth_sendRawTransaction', [RAW], 1000), { result: '0xhash' });
    assert.deepEqual([a.calls.length, b.calls.length, f.calls.length], [1, 1, 0]);
  });

  test('"already known" counts as acceptance (the hash is the transaction\'s); a refusal only when every node refuses', async () => {
    const known = new FakeNode('a', () => ({ error: { code: -32000, message: 'already known' } }));
    const { pool: p } = pool([known, down('b')]);
    const a = await p.call('eth_sendRawTransaction', [RAW], 1000);
    assert.match(String(a.result), /^0x[0-9a-f]{64}$/);
    const low = new FakeNode('a', () => ({ error: { code: -32000, message: 'nonce too low' } }));
    const { pool: q } = pool([low, down('b')]);
    assert.equal((await q.call('eth_sendRawTransaction', [RAW], 1000)).error?.message, 'nonce too low');
  });

  test('writes are never retried: eth_sendTransaction goes to the designated upstream once', async () => {
    const a = down('a');
    const b = ok('b');
    const { pool: p } = pool([a, b]);
    await assert.rejects(p.call('eth_sendTransaction', [{}], 1000));
    assert.deepEqual([a.calls.length, b.calls.length], [1, 0]);
  });

  test('signers (upstreams with the same accounts) fail over in their order: the first whose breaker is open is passed over', async () => {
    const [a, b, c] = [down('a'), ok('b'), ok('c')];
    // c is the first signer, then a, then b; a plain primary without `signer` never signs.
    const { pool: p } = pool([a, b, c, ok('d')], [{ signer: 2 }, { signer: 3 }, { signer: 1 }, {}]);
    assert.deepEqual(await p.call('eth_accounts', [], 1000), { result: 'c' });
    const { pool: q } = pool([a, b], [{ signer: 1 }, { signer: 2 }]);
    // The first signer fails (each call once, never retried on the next: a write may have been sent)...
    for (let i = 0; i < policy.breakerFailures; i++) await assert.rejects(q.call('eth_sendTransaction', [{}], 1000));
    assert.equal(b.calls.length, 0);
    // ...until its breaker opens: from then on the next signer answers.
    assert.deepEqual(await q.call('eth_sendTransaction', [{}], 1000), { result: 'b' });
    assert.deepEqual(await q.call('eth_sign', ['0x1', '0x2'], 1000), { result: 'b' });
    assert.equal(a.calls.length, policy.breakerFailures);
  });
});

/** A node that never answers (a process under SIGSTOP): its calls end only when their signal aborts. */
class StalledNode implements Upstream {
  calls = 0;
  aborted = 0;
  constructor(readonly label: string) {}
  call(_method: string, _params: unknown[], _timeoutMs: number, opts?: { signal?: CallSignal }): Promise<UpstreamAnswer> {
    this.calls++;
    return new Promise((_resolve, reject) => {
      opts?.signal?.onAbort(() => { this.aborted++; reject(opts.signal!.reason); });
    });
  }
  async close(): Promise<void> {}
}

/** The hedges' clock, fired by the test: no test waits for real time. */
class HandClock {
  pending = new Set<Due>();
  add(d: Due): void { this.pending.add(d); }
  remove(d: Due): void { this.pending.delete(d); }
  fire(): void {
    const due = [...this.pending];
    this.pending.clear();
    for (const d of due) d.due();
  }
}

const tick = () => new Promise((r) => setImmediate(r));

describe('upstream pool: hedged reads', () => {
  const hedging: HealthPolicy = { ...policy, hedge: { minMs: 50, maxMs: 500 } };
  function hedgedPool(nodes: Upstream[]) {
    const hand = new HandClock();
    // The first node is the primary, so every first read goes to it; the second is the fallback a hedge may use.
    const members = nodes.map((n, i) => new UpstreamMember(n, { role: i === 0 ? 'primary' : 'fallback', weight: 1 }, i));
    return { hand, members, pool: new UpstreamPool(members, hedging, () => undefined, log, clock, hand) };
  }

  test('a read its node does not answer in its usual time is also sent to another: the first answer wins, the late call is aborted, and a node overtaken breakerFailures times in a row is taken out', async () => {
    const stalled = new StalledNode('stalled');
    const other = ok('other');
    const { hand, members, pool: p } = hedgedPool([stalled, other]);
    for (let i = 1; i <= hedging.breakerFailures; i++) {
      const read = p.call('eth_getBalance', ['0x1', 'latest'], 30_000);
      await tick();
      assert.equal(stalled.calls, i, 'the read went to its node first');
      assert.equal(other.calls.length, i - 1, 'and to no other before its hedge was due');
      assert.equal(hand.pending.size, 1, 'one hedge pending');
      hand.fire();
      assert.deepEqual(await read, { result: 'other' });
      assert.equal(stalled.aborted, i, "the stalled node's call was aborted once the other answered");
    }
    assert.equal(members[0].breaker(T0), 'open', `${hedging.breakerFailures} reads overtaken in a row opened its breaker`);
    assert.deepEqual(await p.call('eth_getBalance', ['0x1', 'latest'], 30_000), { result: 'other' });
    assert.equal(stalled.calls, hedging.breakerFailures, 'the stalled node takes no more reads');
  });

  test('a node that answers before its hedge is due is the only one asked; an answer in between resets its count', async () => {
    const first = ok('first');
    const other = ok('other');
    const { hand, members, pool: p } = hedgedPool([first, other]);
    for (let i = 0; i < 20; i++) assert.deepEqual(await p.call('eth_getBalance', ['0x1', 'latest'], 30_000), { result: 'first' });
    assert.equal(other.calls.length, 0);
    assert.equal(hand.pending.size, 0, 'every hedge let go with its answer');
    assert.equal(members[0].breaker(T0), 'closed');
    // Its usual time comes from its answers: at least the floor, at most the ceiling.
    const after = members[0].hedgeAfter(50, 500);
    assert.ok(after >= 50 && after <= 500, `hedge after ${after} ms`);
  });

  test('no hedge to a node that is not usable, and none for a trace', async () => {
    const stalled = new StalledNode('stalled');
    const down2 = down('down');
    const { hand, members, pool: p } = hedgedPool([stalled, down2]);
    members[1].failed(new Error('x'), { ...hedging, breakerFailures: 1 }, T0);
    const read = p.call('eth_getBalance', ['0x1', 'latest'], 30_000);
    await tick();
    hand.fire();
    await tick();
    assert.equal(down2.calls.length, 0, 'the hedge found no usable node and sent nothing');
    void p.call('debug_traceTransaction', ['0xab'], 30_000).catch(() => undefined);
    await tick();
    assert.equal(hand.pending.size, 0, 'a trace is never hedged');
    void read.catch(() => undefined);
  });
});
