import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { storePerTest, type StoreContract } from '../fixtures.contract.ts';

/** The mail outbox part of the store contract (fixtures.contract.ts), run on SQLite and PostgreSQL. */
export function mailStoreContract(c: StoreContract): void {
  describe('mail store', () => {
    const store = storePerTest(c);

    const T = (m: number) => new Date(Date.UTC(2026, 10, 24, 12, m)).toISOString();

    test('a message is leased to one owner, retried when due, its body emptied once sent or given up, pruned after', async () => {
      await store.mail.enqueueMail({ id: 'm1', to: 'a@example.com', subject: 'one', body: 'link?token=secret1', createdAt: T(0) });
      await store.mail.enqueueMail({ id: 'm2', to: 'b@example.com', subject: 'two', body: 'link?token=secret2', createdAt: T(1) });
      const first = await store.mail.claimMail('x', T(2), T(3), 10);
      assert.deepEqual(first.map((m) => [m.id, m.to, m.subject, m.body, m.attempts, m.sentAt]), [['m1', 'a@example.com', 'one', 'link?token=secret1', 0, null], ['m2', 'b@example.com', 'two', 'link?token=secret2', 0, null]]);
      assert.deepEqual(await store.mail.claimMail('y', T(2), T(3), 10), [], 'leased to x');
      await store.mail.recordMailAttempt('m1', 'y', { sent: true, error: null, at: T(2), nextAttemptAt: T(2) });
      await store.mail.recordMailAttempt('m1', 'x', { sent: true, error: null, at: T(2), nextAttemptAt: T(2) });
      await store.mail.recordMailAttempt('m2', 'x', { sent: false, error: 'timeout', at: T(2), nextAttemptAt: T(5) });
      assert.deepEqual(await store.mail.claimMail('y', T(4), T(5), 10), [], 'm1 sent, m2 not due');
      const again = await store.mail.claimMail('y', T(5), T(6), 10);
      assert.deepEqual(again.map((m) => [m.id, m.attempts, m.lastError, m.body]), [['m2', 1, 'timeout', 'link?token=secret2']]);
      await store.mail.recordMailAttempt('m2', 'y', { sent: false, error: 'refused', at: T(5), nextAttemptAt: T(5), giveUp: true });
      const all = await store.mail.listMail(10);
      assert.deepEqual(all.map((m) => [m.id, m.body, m.sentAt, m.attempts, m.lastError]), [['m2', '', null, 2, 'refused'], ['m1', '', T(2), 1, null]]);
      assert.deepEqual(await store.mail.claimMail('z', T(50), T(51), 10), [], 'given up');
      await store.mail.enqueueMail({ id: 'm3', to: 'c@example.com', subject: 'three', body: 'b', createdAt: T(3) });
      assert.equal(await store.mail.pruneMail(T(10)), 2, 'sent and given up go; one waiting stays');
      assert.deepEqual((await store.mail.listMail(10)).map((m) => m.id), ['m3']);
    });

    test('two instances claiming at the same moment lease each message to one of them only', async () => {
      const other = await c.sameDatabase();
      try {
        for (let i = 0; i < 8; i++) await store.mail.enqueueMail({ id: `m${i}`, to: 'a@example.com', subject: 's', body: 'b', createdAt: T(i) });
        const [a, b] = await Promise.all([store.mail.claimMail('x', T(10), T(20), 5), other.mail.claimMail('y', T(10), T(20), 5)]);
        const ids = [...a, ...b].map((m) => m.id).sort();
        assert.equal(new Set(ids).size, ids.length, `no message leased twice: ${ids.join(', ')}`);
        assert.equal(ids.length, 8, 'the second instance takes what the first left');
      } finally {
        await other.close();
      }
    });
  });
}
