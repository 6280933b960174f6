import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Upstream, UpstreamAnswer } from '../upstream/upstream.ts';
import { UpstreamMember, type HealthPolicy, type MemberConfig } from './upstream-member.ts';
import { UpstreamPool } from './upstream-pool.ts';
import { UpstreamRoom } from './upstream-room.ts';

const log = pino({ level: 'silent' });

/** A node whose answers the test releases (`answerAll`), or at once with `instant`; it notes every call. */
class HeldNode implements Upstream {
  calls: string[] = [];
  private held: Array<() => void> = [];
  constructor(readonly label: string, private readonly instant = false, private readonly answer: (method: string) => UpstreamAnswer = () => ({ result: label })) {}
  call(method: string): Promise<UpstreamAnswer> {
    this.calls.push(method);
    if (this.instant) return Promise.resolve(this.answer(method));
    return new Promise((r) => this.held.push(() => r(this.answer(method))));
  }
  answerAll(): void {
    const h = this.held;
    this.held = [];
    for (const r of h) r();
  }
  async close(): Promise<void> {}
}

function poolOf(nodes: HeldNode[], configs: Partial<MemberConfig>[], more: Partial<HealthPolicy> = {}, now = () => 1_700_000_000_000) {
  const members = nodes.map((n, i) => new UpstreamMember(n, { role: 'primary', weight: 1, ...configs[i] }, i));
  const policy: HealthPolicy = { breakerFailures: 3, breakerCooldownMs: 60_000, maxLagBlocks: 2, ...more };
  return { members, pool: new UpstreamPool(members, policy, () => undefined, log, now) };
}

const read = (p: UpstreamPool) => p.call('eth_getBalance', ['0x1', '0x5'], 1000);
const tick = () => new Promise((r) => setImmediate(r));

describe('upstreams with their own bounds, tiers and gaps', () => {
  test('a fallback (a paid provider) takes no read while the primaries have room, and takes the overflow once they are at their concurrency', async () => {
    const own = new HeldNode('own');
    const paid = new HeldNode('paid', true);
    const { pool } = poolOf([own, paid], [{ concurrency: 2 }, { role: 'fallback' }]);
    const first = [read(pool), read(pool)];
    await tick();
    assert.deepEqual([own.calls.length, paid.calls.length], [2, 0], 'two reads in flight at the own node, none at the provider');
    assert.deepEqual(await read(pool), { result: 'paid' }, 'the third overflows to the fallback');
    own.answerAll();
    await Promise.all(first);
    const again = read(pool);
    await tick();
    assert.deepEqual([own.calls.length, paid.calls.length], [3, 1], 'room again: the own node');
    own.answerAll();
    await again;
  });

  test('a read finding every upstream at its bound waits for one to have room; past upstreams.limitWaitMs, 503 upstreams_busy', async () => {
    const own = new HeldNode('own');
    const { pool } = poolOf([own], [{ concurrency: 1 }], { limitWaitMs: 40 });
    const first = read(pool);
    const second = read(pool);
    await tick();
    assert.equal(own.calls.length, 1, 'the second waits');
    own.answerAll();
    await first;
    await tick();
    assert.equal(own.calls.length, 2, 'and goes as soon as the first is answered');
    const third = read(pool);
    const t0 = performance.now();
    await assert.rejects(third, (e: GatewayError) => e.entry === 'UPSTREAMS_BUSY' && e.status === 503 && e.code === -32005);
    assert.ok(performance.now() - t0 >= 35, 'it waited limitWaitMs');
    own.answerAll();
    await second;
  });

  test("a rate of 2 calls a second: a third read in the same instant waits for the bucket, then goes", async () => {
    let now = 1_000_000;
    const node = new HeldNode('rated', true);
    const { pool } = poolOf([node], [{ rate: 2 }], { limitWaitMs: 2000 }, () => now);
    await read(pool);
    await read(pool);
    const third = read(pool);
    await tick();
    assert.equal(node.calls.length, 2);
    now += 500; // half a second: one call's worth
    await third;
    assert.equal(node.calls.length, 3);
  });

  test('a method an upstream lacks by configuration is never sent to it; none has it: -32601', async () => {
    const provider = new HeldNode('provider', true);
    const own = new HeldNode('own', true);
    const { pool } = poolOf([provider, own], [{ lacks: ['debug_*'] }, { role: 'fallback' }]);
    for (let i = 0; i < 10; i++) assert.deepEqual(await pool.call('debug_traceTransaction', ['0xab'], 1000), { result: 'own' });
    assert.equal(provider.calls.length, 0);
    const { pool: none } = poolOf([new HeldNode('a', true), new HeldNode('b', true)], [{ lacks: ['debug_*'] }, { lacks: ['debug_traceTransaction'] }]);
    const a = await none.call('debug_traceTransaction', ['0xab'], 1000);
    assert.equal(a.error?.code, -32601);
    assert.match(a.error!.message, /debug_traceTransaction does not exist/);
  });

  test('an upstream answering -32601 for a method is not asked it again; another that has it answers', async () => {
    const lacking = new HeldNode('lacking', true, (m) => (m.startsWith('debug_') ? { error: { code: -32601, message: 'the method does not exist/is not available' } } : { result: 'lacking' }));
    const other = new HeldNode('other', true);
    const { pool, members } = poolOf([lacking, other], [{}, {}]);
    for (let i = 0; i < 20; i++) assert.deepEqual(await pool.call('debug_traceTransaction', ['0xab'], 1000), { result: 'other' });
    assert.ok(lacking.calls.filter((c) => c.startsWith('debug_')).length <= 1, `asked ${lacking.calls.length} times`);
    assert.deepEqual(members[0].gapList(1_700_000_000_000), ['debug_traceTransaction']);
    assert.equal(members[0].breaker(1_700_000_000_000), 'closed', 'it is up');
  });
});

describe('UpstreamRoom', () => {
  test('concurrency: room while fewer are in flight', () => {
    const r = new UpstreamRoom(0, 2, 0);
    r.take(0);
    assert.ok(r.has(0));
    r.take(0);
    assert.ok(!r.has(0));
    assert.equal(r.msUntilRoom(0), Number.POSITIVE_INFINITY, 'only a call ending makes room');
    r.release();
    assert.ok(r.has(0));
  });

  test('rate: a bucket of one second, refilled continuously; checks and writes may take it below empty', () => {
    const r = new UpstreamRoom(10, 0, 0);
    for (let i = 0; i < 10; i++) r.take(0);
    assert.ok(!r.has(0));
    assert.equal(r.msUntilRoom(0), 100);
    assert.ok(r.has(100));
    r.take(100);
    r.take(100);
    assert.equal(r.msUntilRoom(100), 200, 'one below empty: two calls\' time');
  });

  test('no bounds: no room object at all', () => {
    assert.equal(UpstreamRoom.of(0, 0, 0), undefined);
    assert.equal(UpstreamRoom.of(undefined, undefined, 0), undefined);
  });
});
