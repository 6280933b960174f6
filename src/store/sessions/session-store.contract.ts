import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { freePlan, newAccount, storePerTest, type StoreContract } from '../fixtures.contract.ts';

/** The sessions part of the store contract (fixtures.contract.ts), run on SQLite and PostgreSQL. */
export function sessionStoreContract(c: StoreContract): void {
  describe('session store', () => {
    const store = storePerTest(c);

    describe('sessions', () => {
      test('a session is found by its hash until it expires or is deleted; all of an account\'s end together', async () => {
        await store.plans.createPlan(freePlan);
        const acct = (await store.accounts.createAccount(newAccount())).id;
        const soon = new Date(Date.now() + 60_000).toISOString();
        await store.sessions.createSession({ idHash: 'h1', accountId: acct, csrf: 'c1', createdAt: new Date().toISOString(), expiresAt: soon });
        await store.sessions.createSession({ idHash: 'h2', accountId: acct, csrf: 'c2', createdAt: new Date().toISOString(), expiresAt: soon });
        await store.sessions.createSession({ idHash: 'old', accountId: acct, csrf: 'c3', createdAt: '2020-01-01T00:00:00.000Z', expiresAt: '2020-01-02T00:00:00.000Z' });
        assert.equal((await store.sessions.getSession('h1'))?.csrf, 'c1');
        assert.equal(await store.sessions.getSession('old'), undefined, 'expired');
        await store.sessions.deleteSession('h1');
        assert.equal(await store.sessions.getSession('h1'), undefined);
        await store.sessions.deleteSessionsOf(acct);
        assert.equal(await store.sessions.getSession('h2'), undefined);
      });

      test("trimSessions keeps an account's newest sessions and deletes the older ones, not another account's", async () => {
        await store.plans.createPlan(freePlan);
        const acct = (await store.accounts.createAccount(newAccount())).id;
        const other = (await store.accounts.createAccount(newAccount({ email: 'other-trim@example.com' }))).id;
        const soon = new Date(Date.now() + 60_000).toISOString();
        for (let i = 1; i <= 4; i++) await store.sessions.createSession({ idHash: `t${i}`, accountId: acct, csrf: 'c', createdAt: `2026-01-01T00:00:0${i}.000Z`, expiresAt: soon });
        await store.sessions.createSession({ idHash: 'o1', accountId: other, csrf: 'c', createdAt: '2026-01-01T00:00:00.000Z', expiresAt: soon });
        await store.sessions.trimSessions(acct, 2);
        const live = await Promise.all(['t1', 't2', 't3', 't4', 'o1'].map(async (h) => (await store.sessions.getSession(h)) !== undefined));
        assert.deepEqual(live, [false, false, true, true, true]);
      });

      test('prunes expired sessions and nothing else', async () => {
        await store.plans.createPlan(freePlan);
        const acct = (await store.accounts.createAccount(newAccount())).id;
        const now = new Date();
        const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
        await store.sessions.createSession({ idHash: 'gone-1', accountId: acct, csrf: 'c', createdAt: at(-7_200_000), expiresAt: at(-3_600_000) });
        await store.sessions.createSession({ idHash: 'gone-2', accountId: acct, csrf: 'c', createdAt: at(-7_200_000), expiresAt: at(-1) });
        await store.sessions.createSession({ idHash: 'live', accountId: acct, csrf: 'c', createdAt: at(0), expiresAt: at(3_600_000) });
        assert.equal(await store.sessions.pruneSessions(now.toISOString()), 2);
        assert.equal(await store.sessions.pruneSessions(now.toISOString()), 0);
        assert.equal((await store.sessions.getSession('live'))?.csrf, 'c');
      });
    });
  });
}
