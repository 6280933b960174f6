import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import pino from 'pino';
import type { GatewayError } from '../errors/gateway-error.ts';
import { primaryWithWorkers } from '../../test/helpers/primary-workers.ts';
import { REDIS_URL, redisSkipReason, removeKeys, testPrefix } from '../../test/helpers/redis.ts';
import { UNREACHABLE } from './fallback.ts';
import { PrimaryClient, type Channel } from './ipc.ts';
import { CONTRACT_BACKOFF } from './login-backoff/login-backoff.contract.ts';
import { MemoryFilterStore } from './filter-store/memory-filter-store.ts';
import { MemoryLoginBackoff } from './login-backoff/memory-login-backoff.ts';
import { openSharedState, type SharedState, type SharedStateOptions } from './open-shared-state.ts';

const skip = await redisSkipReason('shared state suite (with Redis)');
const prefix = testPrefix();
after(() => (skip ? undefined : removeKeys(prefix)));
const opened: SharedState[] = [];
after(() => Promise.all(opened.map((s) => s.close())));

/** The shared state as a process opens it, with the lines it logs. */
async function open(o: Partial<SharedStateOptions>) {
  const lines: Array<{ level: number; msg: string; shared?: string; at?: string }> = [];
  const log = pino({ level: 'info' }, new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } }));
  const shared = await openSharedState({ redisTimeoutMs: 200, backoff: CONTRACT_BACKOFF, log, ...o });
  opened.push(shared);
  return { shared, lines };
}

/** A worker whose primary never answers (it hangs): each call fails at the worker's time-out. */
const silent: Channel = { send: () => true, on: () => undefined, off: () => undefined };

describe('where the shared state is kept, chosen from the configuration', () => {
  test('one process alone: in its memory, no head to share, every call decided at once', async () => {
    const { shared } = await open({});
    assert.equal(shared.rateLimiter.status(), 'memory');
    assert.ok(shared.filters instanceof MemoryFilterStore);
    assert.ok(shared.loginBackoff instanceof MemoryLoginBackoff);
    assert.equal(shared.heads, undefined);
    assert.equal(shared.leases.take('checks:x', 1000), true, 'a lease of its own, at once');
    assert.ok(!(shared.rateLimiter.consume('b', 1, 1, 1) instanceof Promise));
  });

  test('a worker of --workers N: in its primary, what one worker does the other sees', async () => {
    const primary = primaryWithWorkers();
    after(() => primary.close());
    const [a, b] = [(await open({ primary: primary.worker() })).shared, (await open({ primary: primary.worker() })).shared];
    assert.equal(a.rateLimiter.status(), 'primary');
    assert.equal((await a.rateLimiter.consume('b', 2, 0.1, 3)).remaining, 1);
    assert.equal((await b.rateLimiter.consume('b', 1, 0.1, 3)).remaining, 0, 'one bucket, in the primary');
    assert.equal(await a.leases.take('checks:y', 5000), true);
    assert.equal(await b.leases.take('checks:y', 5000), false, 'one lease, in the primary');
  });

  test('instances with a Redis URL: in Redis', { skip }, async () => {
    const { shared, lines } = await open({ redisUrl: REDIS_URL, redisPrefix: prefix });
    assert.equal(shared.rateLimiter.status(), 'redis');
    assert.ok(shared.heads && !shared.heads.embeddedToo, "an instance's embedded chain is its own");
    assert.deepEqual(lines, []);
  });
});

/**
 * Each kind's store not answering, met by the one fallback: said once per kind in the one line, and each kind then
 * does what it does alone (docs/architecture.md, "Shared state").
 */
for (const [name, options] of [
  ['Redis, with nothing listening at its address', { redisUrl: 'redis://127.0.0.1:1' }],
  ['a primary that does not answer', { primary: new PrimaryClient(silent, 50) }],
] as const) {
  describe(`the shared state while ${name}`, () => {
    test('limits and budgets decide in this process, filters answer FILTERS_UNAVAILABLE, the head and leases are its own, the back-off is its memory', async () => {
      const { shared, lines } = await open(options);
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push((await shared.rateLimiter.consume('b', 1, 0.1, 3)).allowed);
      assert.deepEqual(decisions, [true, true, true, false], 'the burst, from this process\'s memory');
      assert.equal(shared.rateLimiter.status(), 'degraded');
      const budget = shared.eventBudgets('t', { perSecond: 0.1, burst: 1 });
      assert.deepEqual([await budget.spend('10.0.0.1'), await budget.spend('10.0.0.1')], [undefined, 10]);
      await assert.rejects(shared.filters.get('0x1'), (e: GatewayError) => e.entry === 'FILTERS_UNAVAILABLE' && e.code === -32002 && !/127\.0\.0\.1/.test(e.message));
      const head = shared.heads!.network(1, ['http://node/'], () => {});
      assert.equal(await head.read(), undefined);
      await head.publish(5);
      assert.equal(await head.leads(1000), true, 'it checks its nodes itself');
      assert.equal(await shared.leases.take('checks:z', 1000), true);
      for (let i = 0; i < 4; i++) await shared.loginBackoff.failed('a@example.com', '10.0.0.2', 1_000_000);
      assert.equal(await shared.loginBackoff.waitSeconds('a@example.com', '10.0.0.2', 1_000_000), 4, 'from memory');

      const said = lines.filter((l) => l.msg === UNREACHABLE).map((l) => l.shared).sort();
      assert.deepEqual(said, ['filters', 'heads and node checks', 'leases', 'login back-off', 'per-second limits and failure guards'], 'one line per kind, in one wording');
      assert.ok(lines.every((l) => !JSON.stringify(l).includes('redis://')), 'never the URL: it may hold a password');
    });
  });
}
