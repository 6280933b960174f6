import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { bigPlan, conflict, freePlan, isIso, newAccount, tick, storePerTest, type StoreContract } from '../fixtures.contract.ts';

/** The accounts part of the store contract (fixtures.contract.ts), run on SQLite and PostgreSQL. */
export function accountStoreContract(c: StoreContract): void {
  describe('account store', () => {
    const store = storePerTest(c);

    describe('accounts', () => {
      beforeEach(async () => {
        await store.plans.createPlan(freePlan);
        await store.plans.createPlan(bigPlan);
      });

      test('keeps every field of an account and finds it by id', async () => {
        const input = newAccount({ passwordHash: 'scrypt$16384$8$1$c2FsdA$aGFzaA', role: 'operator' });
        const created = await store.accounts.createAccount(input);
        assert.deepEqual({ ...created, createdAt: undefined, updatedAt: undefined }, { ...input, createdAt: undefined, updatedAt: undefined });
        isIso(created.createdAt);
        assert.deepEqual(await store.accounts.getAccount(input.id), created);
        assert.equal(await store.accounts.getAccount('nope'), undefined);
      });

      test('finds an account by email whatever its case, and keeps the email as typed', async () => {
        const created = await store.accounts.createAccount(newAccount({ email: 'Ada.Lovelace@Example.COM' }));
        assert.deepEqual(await store.accounts.getAccountByEmail('ada.lovelace@example.com'), created);
        assert.deepEqual(await store.accounts.getAccountByEmail('ADA.LOVELACE@EXAMPLE.COM'), created);
        assert.equal(created.email, 'Ada.Lovelace@Example.COM');
        assert.equal(await store.accounts.getAccountByEmail('someone@example.com'), undefined);
      });

      test('refuses a second account with the same email, whatever its case', async () => {
        await store.accounts.createAccount(newAccount({ email: 'ada@example.com' }));
        await assert.rejects(store.accounts.createAccount(newAccount({ email: 'ADA@Example.com' })), conflict(/email ADA@Example.com already exists/));
        assert.equal((await store.accounts.listAccounts()).length, 1);
      });

      test('refuses a second account with the same id', async () => {
        const a = await store.accounts.createAccount(newAccount());
        await assert.rejects(store.accounts.createAccount(newAccount({ id: a.id })), conflict(/already exists/));
      });

      test('refuses an account on an unknown plan', async () => {
        await assert.rejects(store.accounts.createAccount(newAccount({ planId: 'platinum' })), conflict(/unknown plan "platinum"/));
        assert.deepEqual(await store.accounts.listAccounts(), []);
      });

      test('lists every account', async () => {
        const a = await store.accounts.createAccount(newAccount());
        const b = await store.accounts.createAccount(newAccount({ planId: 'enterprise' }));
        assert.deepEqual((await store.accounts.listAccounts()).map((x) => x.id).sort(), [a.id, b.id].sort());
      });

      test('updates the given fields, bumping updatedAt; can clear the password', async () => {
        const created = await store.accounts.createAccount(newAccount({ passwordHash: 'scrypt$x' }));
        await tick();
        const patch = { name: 'Grace', email: 'Grace@example.com', passwordHash: null, status: 'suspended', role: 'operator', planId: 'enterprise' } as const;
        const updated = await store.accounts.updateAccount(created.id, patch);
        assert.deepEqual({ ...updated, updatedAt: undefined }, { ...created, ...patch, updatedAt: undefined });
        assert.ok(updated!.updatedAt > created.updatedAt);
        assert.deepEqual(await store.accounts.getAccountByEmail('grace@EXAMPLE.com'), updated);
        assert.equal(await store.accounts.getAccountByEmail(created.email), undefined);
      });

      test('refuses to change an email to one another account has, whatever its case', async () => {
        await store.accounts.createAccount(newAccount({ email: 'ada@example.com' }));
        const b = await store.accounts.createAccount(newAccount());
        await assert.rejects(store.accounts.updateAccount(b.id, { email: 'Ada@Example.com' }), conflict(/already exists/));
        assert.equal((await store.accounts.getAccount(b.id))!.email, b.email);
      });

      test('lets an account change the case of its own email', async () => {
        const a = await store.accounts.createAccount(newAccount({ email: 'ada@example.com' }));
        assert.equal((await store.accounts.updateAccount(a.id, { email: 'Ada@example.com' }))!.email, 'Ada@example.com');
      });

      test('refuses to move an account to an unknown plan', async () => {
        const a = await store.accounts.createAccount(newAccount());
        await assert.rejects(store.accounts.updateAccount(a.id, { planId: 'platinum' }), conflict(/unknown plan "platinum"/));
        assert.equal((await store.accounts.getAccount(a.id))!.planId, 'free');
      });

      test('answers undefined when updating an account that does not exist', async () => {
        assert.equal(await store.accounts.updateAccount('nope', { name: 'x' }), undefined);
      });
    });

  });
}
