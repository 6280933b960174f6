import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { freePlan, newAccount, storePerTest, type StoreContract } from '../fixtures.contract.ts';

/** The webhooks part of the store contract (fixtures.contract.ts), run on SQLite and PostgreSQL. */
export function webhookStoreContract(c: StoreContract): void {
  describe('webhook store', () => {
    const store = storePerTest(c);

    describe('webhooks and their outbox', () => {
      const T = (s: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, s)).toISOString();
      test('events go out in order per webhook, one at a time, leased to one owner; attempts recorded; paused ones wait', async () => {
        await store.plans.createPlan(freePlan);
        const acct = (await store.accounts.createAccount(newAccount())).id;
        const hook = (id: string) => store.webhooks.createWebhook({ id, accountId: acct, network: 'mainnet', kind: 'block.mined', url: 'https://example.com/h', options: { a: 1 }, secret: 's', status: 'active' });
        const w1 = await hook('w1');
        await hook('w2');
        assert.deepEqual(w1.options, { a: 1 });
        assert.equal(w1.disabledReason, null);
        const ev = (id: string, webhookId: string, s: number) => ({ id, webhookId, type: 'block.mined', body: `{"n":${s}}`, createdAt: T(s) });
        await store.webhookEvents.addWebhookEvents([ev('e1', 'w1', 1), ev('e2', 'w1', 2), ev('f1', 'w2', 1)]);
        await store.webhookEvents.addWebhookEvents([ev('e1', 'w1', 1), ev('e3', 'w1', 3), ev('gone', 'nope', 4)]);
        assert.deepEqual((await store.webhookEvents.listWebhookEvents('w1', 10)).map((e) => [e.id, e.seq]), [['e3', 3], ['e2', 2], ['e1', 1]], 'one e1; in order');

        const first = await store.webhookEvents.claimWebhookEvents('A', T(10), T(40), 10);
        assert.deepEqual(first.map((e) => e.id).sort(), ['e1', 'f1'], 'only the oldest pending event of each webhook');
        assert.deepEqual(await store.webhookEvents.claimWebhookEvents('B', T(11), T(41), 10), [], 'leased to A');
        await store.webhookEvents.recordWebhookAttempt('e1', 'B', { delivered: true, status: 200, error: null, at: T(12), nextAttemptAt: T(12) });
        assert.equal((await store.webhookEvents.listWebhookEvents('w1', 10)).find((e) => e.id === 'e1')!.status, 'pending', 'not B\'s lease');
        await store.webhookEvents.recordWebhookAttempt('e1', 'A', { delivered: false, status: 500, error: 'HTTP 500', at: T(12), nextAttemptAt: T(30) });
        await store.webhookEvents.recordWebhookAttempt('f1', 'A', { delivered: true, status: 204, error: null, at: T(12), nextAttemptAt: T(12) });
        assert.deepEqual(await store.webhookEvents.claimWebhookEvents('B', T(20), T(50), 10), [], 'e1 waits for its retry; e2 waits behind it');
        const retry = await store.webhookEvents.claimWebhookEvents('B', T(30), T(60), 10);
        assert.deepEqual(retry.map((e) => [e.id, e.attempts, e.lastStatus]), [['e1', 1, 500]]);
        await store.webhookEvents.recordWebhookAttempt('e1', 'B', { delivered: true, status: 200, error: null, at: T(31), nextAttemptAt: T(31) });
        assert.deepEqual((await store.webhookEvents.claimWebhookEvents('B', T(32), T(62), 10)).map((e) => e.id), ['e2']);
        await store.webhookEvents.recordWebhookAttempt('e2', 'B', { delivered: true, status: 200, error: null, at: T(33), nextAttemptAt: T(33) });

        await store.webhooks.updateWebhook('w1', { status: 'paused' });
        assert.deepEqual(await store.webhookEvents.claimWebhookEvents('B', T(34), T(64), 10), [], 'a paused webhook\'s events wait');
        const back = await store.webhooks.updateWebhook('w1', { status: 'active', secret: 's2', disabledReason: null });
        assert.equal(back!.secret, 's2');
        assert.deepEqual((await store.webhookEvents.claimWebhookEvents('B', T(35), T(65), 10)).map((e) => e.id), ['e3']);
        // e1 took two attempts (31 s after it was written), e2 one (31 s), f1 one (11 s); e3 waits, leased.
        const other = (await store.accounts.createAccount(newAccount())).id;
        assert.deepEqual(await store.webhookEvents.webhookStats(other), [], 'another account sees none of them');
        assert.deepEqual(await store.webhookEvents.webhookStats(acct), [
          { webhookId: 'w1', events: 3, delivered: 2, pending: 1, attempts: 3, failedAttempts: 1, oldestPendingAt: T(3), meanDeliveryMs: 30_500 },
          { webhookId: 'w2', events: 1, delivered: 1, pending: 0, attempts: 1, failedAttempts: 0, oldestPendingAt: null, meanDeliveryMs: 11_000 },
        ]);
        assert.equal((await store.webhookEvents.webhookStats()).length, 2, 'everyone\'s, for the operator');
        assert.deepEqual((await store.webhookEvents.getWebhookEvents(['f1', 'nope', 'e2'])).map((e) => [e.id, e.body]), [['e2', '{"n":2}'], ['f1', '{"n":1}']]);
        assert.deepEqual(await store.webhookEvents.getWebhookEvents([]), []);
        const delivered = (await store.webhookEvents.listWebhookEvents('w1', 10)).find((e) => e.id === 'e1')!;
        assert.deepEqual([delivered.status, delivered.attempts, delivered.lastStatus, delivered.deliveredAt], ['delivered', 2, 200, T(31)]);
        // Retention: events delivered before the cut go (e1 at 31 s, f1 at 12 s); e2 (33 s) stays, e3 waits and stays.
        assert.equal(await store.webhookEvents.pruneWebhookEvents(T(32)), 2);
        assert.deepEqual((await store.webhookEvents.listWebhookEvents('w1', 10)).map((e) => e.id), ['e3', 'e2']);
        assert.deepEqual(await store.webhookEvents.listWebhookEvents('w2', 10), []);
        await store.webhookEvents.addWebhookEvents([ev('e4', 'w1', 4)]);
        assert.deepEqual((await store.webhookEvents.listWebhookEvents('w1', 10)).map((e) => [e.id, e.seq]), [['e4', 4], ['e3', 3], ['e2', 2]], 'the order goes on');
        assert.equal((await store.webhooks.listWebhooks(acct)).length, 2);
        assert.equal(await store.webhooks.deleteWebhook('w1'), true);
        assert.deepEqual(await store.webhookEvents.listWebhookEvents('w1', 10), [], 'its events went with it');
      });

      test('an attempt keeps when it began, how long it took and the start of the answer (the deliveries view)', async () => {
        await store.plans.createPlan(freePlan);
        const acct = (await store.accounts.createAccount(newAccount())).id;
        // An account kind has no network: stored as ''.
        await store.webhooks.createWebhook({ id: 'wu', accountId: acct, network: '', kind: 'usage.threshold', url: 'https://example.com/h', options: {}, secret: 's', status: 'active' });
        assert.equal((await store.webhooks.getWebhook('wu'))!.network, '');
        await store.webhookEvents.addWebhookEvents([{ id: 'u1', webhookId: 'wu', type: 'usage.threshold', body: '{"n":1}', createdAt: T(1) }]);
        const [fresh] = await store.webhookEvents.listWebhookEvents('wu', 10);
        assert.deepEqual([fresh.lastAttemptAt, fresh.lastDurationMs, fresh.lastResponse], [null, null, null], 'not tried yet');
        await store.webhookEvents.claimWebhookEvents('A', T(2), T(30), 10);
        await store.webhookEvents.recordWebhookAttempt('u1', 'A', { delivered: false, status: 503, error: 'HTTP 503', at: T(3), nextAttemptAt: T(20), durationMs: 1234, responseBody: 'busy: try later ✓' });
        const [tried] = await store.webhookEvents.listWebhookEvents('wu', 10);
        assert.deepEqual([tried.status, tried.attempts, tried.lastAttemptAt, tried.lastDurationMs, tried.lastResponse, tried.lastStatus, tried.nextAttemptAt],
          ['pending', 1, T(3), 1234, 'busy: try later ✓', 503, T(20)]);
        await store.webhookEvents.claimWebhookEvents('A', T(20), T(50), 10);
        await store.webhookEvents.recordWebhookAttempt('u1', 'A', { delivered: false, status: null, error: 'no answer: ECONNREFUSED', at: T(21), nextAttemptAt: T(40), durationMs: 3, responseBody: null });
        const [again] = await store.webhookEvents.listWebhookEvents('wu', 10);
        assert.deepEqual([again.attempts, again.lastAttemptAt, again.lastDurationMs, again.lastResponse, again.lastStatus], [2, T(21), 3, null, null], 'the last attempt, not the first');
      });

      test('a lease renewed by its owner holds past its first end; the attempt is still recorded; another owner\'s renewal and a past time let go', async () => {
        await store.plans.createPlan(freePlan);
        const acct = (await store.accounts.createAccount(newAccount())).id;
        for (const id of ['r1', 'r2']) await store.webhooks.createWebhook({ id, accountId: acct, network: 'mainnet', kind: 'block.mined', url: 'https://example.com/h', options: {}, secret: 's', status: 'active' });
        const ev = (id: string, webhookId: string, s: number) => ({ id, webhookId, type: 'block.mined', body: '{}', createdAt: T(s) });
        await store.webhookEvents.addWebhookEvents([ev('a1', 'r1', 1), ev('a2', 'r1', 2), ev('b1', 'r2', 1)]);
        assert.deepEqual((await store.webhookEvents.claimWebhookEvents('A', T(10), T(14), 10)).map((e) => e.id).sort(), ['a1', 'b1']);
        assert.equal(await store.webhookEvents.renewWebhookLeases('A', ['a1', 'b1'], T(18)), 2, 'both moved on');
        assert.equal(await store.webhookEvents.renewWebhookLeases('A', [], T(60)), 0, 'none named: none moved');
        assert.equal(await store.webhookEvents.renewWebhookLeases('B', ['a1', 'b1'], T(60)), 0, 'not B\'s leases');
        assert.deepEqual(await store.webhookEvents.claimWebhookEvents('B', T(15), T(19), 10), [], 'past the first end (14 s), both still leased to A (18 s)');
        // A's attempt at a1 is recorded after the renewals; then a renewal naming it again changes nothing.
        await store.webhookEvents.recordWebhookAttempt('a1', 'A', { delivered: true, status: 200, error: null, at: T(16), nextAttemptAt: T(16) });
        assert.equal((await store.webhookEvents.listWebhookEvents('r1', 10)).find((e) => e.id === 'a1')!.status, 'delivered', 'the attempt recorded after renewals');
        assert.equal(await store.webhookEvents.renewWebhookLeases('A', ['a1', 'b1'], T(20)), 1, 'a recorded event is no longer leased: only b1 moved');
        assert.deepEqual((await store.webhookEvents.claimWebhookEvents('B', T(17), T(21), 10)).map((e) => e.id), ['a2'], 'a2 next in line; b1 still A\'s (20 s)');
        // b1 not renewed any more (its owner died): another takes it once the lease runs out, and A's renewal then fails.
        assert.deepEqual((await store.webhookEvents.claimWebhookEvents('B', T(20), T(24), 10)).map((e) => e.id), ['b1'], 'taken by B when A\'s lease ran out');
        assert.equal(await store.webhookEvents.renewWebhookLeases('A', ['b1'], T(30)), 0, 'A no longer holds b1');
        await store.webhookEvents.recordWebhookAttempt('b1', 'A', { delivered: true, status: 200, error: null, at: T(21), nextAttemptAt: T(21) });
        assert.equal((await store.webhookEvents.listWebhookEvents('r2', 10))[0].status, 'pending', 'A\'s late record refused: the lease is B\'s');
        // A time already past lets a lease go at once: the next claim takes it.
        assert.equal(await store.webhookEvents.renewWebhookLeases('B', ['b1'], T(21)), 1);
        assert.equal(await store.webhookEvents.renewWebhookLeases('B', ['a2'], T(40)), 1);
        assert.deepEqual((await store.webhookEvents.claimWebhookEvents('A', T(22), T(26), 10)).map((e) => e.id), ['b1'], 'let go by B at 21 s, taken by A at 22 s (a2 renewed by B)');
      });

      test('two instances claiming at the same moment lease each due head to one of them only', async () => {
        const other = await c.sameDatabase();
        try {
          await store.plans.createPlan(freePlan);
          const acct = (await store.accounts.createAccount(newAccount())).id;
          const hooks = ['h0', 'h1', 'h2', 'h3', 'h4', 'h5'];
          for (const id of hooks) await store.webhooks.createWebhook({ id, accountId: acct, network: 'mainnet', kind: 'block.mined', url: 'https://example.com/h', options: {}, secret: 's', status: 'active' });
          await store.webhookEvents.addWebhookEvents(hooks.flatMap((h) => [1, 2].map((n) => ({ id: `${h}-${n}`, webhookId: h, type: 'block.mined', body: '{}', createdAt: T(n) }))));
          const [a, b] = await Promise.all([
            store.webhookEvents.claimWebhookEvents('A', T(10), T(40), 10),
            other.webhookEvents.claimWebhookEvents('B', T(10), T(40), 10),
          ]);
          assert.deepEqual([...a, ...b].map((e) => e.id).sort(), hooks.map((h) => `${h}-1`), 'each head once, and no second event of a webhook');
          assert.deepEqual(await other.webhookEvents.claimWebhookEvents('B', T(11), T(41), 10), [], 'all leased');
        } finally {
          await other.close();
        }
      });

      test('the outbox in numbers equals a recount of its events after every kind of write (counters, not scans)', async () => {
        await store.plans.createPlan(freePlan);
        const a = (await store.accounts.createAccount(newAccount())).id;
        const b = (await store.accounts.createAccount(newAccount())).id;
        const ids = ['ca1', 'ca2', 'cb1'];
        for (const [id, acct] of [['ca1', a], ['ca2', a], ['cb1', b]]) {
          await store.webhooks.createWebhook({ id, accountId: acct, network: 'mainnet', kind: 'block.mined', url: 'https://example.com/h', options: {}, secret: 's', status: 'active' });
        }
        // What the numbers must be, counted from the events themselves.
        const recount = async (only?: string[]) => {
          const out = [];
          for (const id of only ?? ids) {
            const evs = await store.webhookEvents.listWebhookEvents(id, 100_000);
            if (evs.length === 0) continue;
            const done = evs.filter((e) => e.status === 'delivered');
            const attempts = evs.reduce((t, e) => t + e.attempts, 0);
            const waiting = evs.filter((e) => e.status === 'pending').map((e) => e.createdAt).sort();
            const ms = done.reduce((t, e) => t + Date.parse(e.deliveredAt!) - Date.parse(e.createdAt), 0);
            out.push({ webhookId: id, events: evs.length, delivered: done.length, pending: evs.length - done.length, attempts, failedAttempts: attempts - done.length,
              oldestPendingAt: waiting[0] ?? null, meanDeliveryMs: done.length > 0 ? Math.round(ms / done.length) : null });
          }
          return out;
        };
        const same = async (after: string) => {
          assert.deepEqual(await store.webhookEvents.webhookStats(), await recount(), `everyone's, after ${after}`);
          assert.deepEqual(await store.webhookEvents.webhookStats(a), await recount(['ca1', 'ca2']), `account a's, after ${after}`);
        };
        const T = (s: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, s)).toISOString();
        const ev = (id: string, webhookId: string, s: number, type = 'block.mined') => ({ id, webhookId, type, body: '{}', createdAt: T(s) });
        await same('nothing');
        // Written out of time order: the oldest waiting one is the earliest written, not the first in line.
        await store.webhookEvents.addWebhookEvents([ev('x1', 'ca1', 5), ev('x2', 'ca1', 2), ev('x3', 'ca1', 7), ev('y1', 'ca2', 1), ev('z1', 'cb1', 3), ev('t1', 'cb1', 4, 'webhook.test')]);
        await same('inserts');
        await store.webhookEvents.addWebhookEvents([ev('x1', 'ca1', 5), ev('gone', 'nope', 1), ev('t2', 'ca2', 9, 'webhook.test')]);
        await same('a duplicate, an unknown webhook and one more');
        const owner = 'o';
        const claim = (s: number) => store.webhookEvents.claimWebhookEvents(owner, T(s), T(s + 30), 10);
        assert.deepEqual((await claim(10)).map((e) => e.id).sort(), ['x1', 'y1', 'z1']);
        await same('leases');
        await store.webhookEvents.recordWebhookAttempt('x1', owner, { delivered: false, status: 500, error: 'HTTP 500', at: T(11), nextAttemptAt: T(12) });
        await store.webhookEvents.recordWebhookAttempt('y1', owner, { delivered: true, status: 200, error: null, at: T(11), nextAttemptAt: T(11) });
        await store.webhookEvents.recordWebhookAttempt('z1', 'someone else', { delivered: true, status: 200, error: null, at: T(11), nextAttemptAt: T(11) });
        await same('a failure, a delivery and an attempt under a lease that is not the recorder\'s');
        await store.webhookEvents.recordWebhookAttempt('z1', owner, { delivered: true, status: 204, error: null, at: T(13), nextAttemptAt: T(13) });
        assert.deepEqual((await claim(20)).map((e) => e.id).sort(), ['t1', 't2', 'x1']);
        await store.webhookEvents.recordWebhookAttempt('x1', owner, { delivered: true, status: 200, error: null, at: T(20), nextAttemptAt: T(20) });
        await store.webhookEvents.recordWebhookAttempt('t1', owner, { delivered: true, status: 200, error: null, at: T(21), nextAttemptAt: T(21) });
        await same('retries and deliveries');
        assert.equal(await store.webhookEvents.pruneWebhookEvents(T(14)), 2, 'y1 and z1 were delivered before the cut');
        await same('the retention prune');
        assert.equal(await store.webhookEvents.pruneWebhookTestEvents(T(10)), 2, 't1 (delivered) and t2 (waiting)');
        await same('the test-event prune');
        assert.equal((await store.webhookEvents.webhookStats()).some((w) => w.webhookId === 'cb1'), false, 'a webhook with no event left is not listed');
        await store.webhookEvents.addWebhookEvents([ev('z2', 'cb1', 30)]);
        await same('a webhook\'s first event after its outbox emptied');
        assert.equal(await store.webhooks.deleteWebhook('ca1'), true);
        await same('a webhook deleted with its events');
        await store.webhooks.createWebhook({ id: 'ca1', accountId: a, network: 'mainnet', kind: 'block.mined', url: 'https://example.com/h', options: {}, secret: 's', status: 'active' });
        await store.webhookEvents.addWebhookEvents([ev('x9', 'ca1', 40)]);
        await same('a webhook made again under the same id: it starts from nothing');
        assert.equal((await store.webhookEvents.webhookStats(a)).find((w) => w.webhookId === 'ca1')?.events, 1);
      });
    });

  });
}
