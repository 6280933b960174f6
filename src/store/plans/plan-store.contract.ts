import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bigPlan, conflict, freePlan, isIso, newAccount, newKey, tick, storePerTest, type StoreContract } from '../fixtures.contract.ts';
import { PLAN_LIMITS } from '../../config/plan-limits.ts';
import type { NewPlan } from './plan-store.ts';
import { findKeyByHash } from '../keys/key-store.ts';

/** The plans part of the store contract (fixtures.contract.ts), run on SQLite and PostgreSQL. */
export function planStoreContract(c: StoreContract): void {
  describe('plan store', () => {
    const store = storePerTest(c);

    describe('plans', () => {
      test('keeps every field of a plan, with a monthly quota beyond 32 bits as a number', async () => {
        const created = await store.plans.createPlan(bigPlan);
        assert.deepEqual({ ...created, createdAt: undefined, updatedAt: undefined }, { ...bigPlan, createdAt: undefined, updatedAt: undefined });
        isIso(created.createdAt);
        assert.equal(created.updatedAt, created.createdAt);
        assert.deepEqual(await store.plans.getPlan('enterprise'), created);
        assert.equal(typeof (await store.plans.getPlan('enterprise'))!.cuPerMonth, 'number');
      });

      test('every limit of the plan-limits definition round-trips: created, changed alone, read with a key', async () => {
        // Values of their own (not the defaults), so that a column that is not written or not read shows.
        const own = (i: number, flip = 0) => Object.fromEntries(PLAN_LIMITS.map((l, j) => [l.name,
          l.type === 'boolean' ? !(l.default ?? false) !== Boolean(flip) : Math.min(l.maximum ?? Infinity, (l.minimum ?? 0) + 3 + 11 * j + i)]));
        const made = await store.plans.createPlan({ id: 'every-limit', name: 'Every limit', ...own(0) } as NewPlan);
        for (const l of PLAN_LIMITS) assert.equal(made[l.name], own(0)[l.name], `${l.name} created`);
        for (const l of PLAN_LIMITS) {
          const changed = await store.plans.updatePlan('every-limit', { [l.name]: own(1, 1)[l.name] });
          assert.equal(changed![l.name], own(1, 1)[l.name], `${l.name} changed`);
          assert.equal((await store.plans.getPlan('every-limit'))![l.name], own(1, 1)[l.name], `${l.name} read back`);
        }
        const account = await store.accounts.createAccount(newAccount({ planId: 'every-limit' }));
        const key = newKey(account.id);
        await store.keys.insertKey(key);
        const context = await findKeyByHash(store.keys, key.hash);
        for (const l of PLAN_LIMITS) assert.equal(context!.plan[l.name], own(1, 1)[l.name], `${l.name} with a key`);
      });

      test('a plan made without maxKeys gets 100', async () => {
        assert.equal((await store.plans.createPlan(freePlan)).maxKeys, 100);
        assert.equal((await store.plans.updatePlan('free', { maxKeys: 7 }))!.maxKeys, 7);
        assert.equal((await store.plans.getPlan('free'))!.maxWebhooks, 20, 'a plan made without maxWebhooks gets 20');
        assert.equal((await store.plans.updatePlan('free', { maxWebhooks: 3 }))!.maxWebhooks, 3);
      });

      test('lists plans smallest first, as on a pricing page', async () => {
        await store.plans.createPlan(bigPlan);
        await store.plans.createPlan(freePlan);
        assert.deepEqual((await store.plans.listPlans()).map((p) => p.id), ['free', 'enterprise']);
      });

      test('refuses a second plan with the same id', async () => {
        await store.plans.createPlan(freePlan);
        await assert.rejects(store.plans.createPlan({ ...freePlan, name: 'Other' }), conflict(/plan "free" already exists/));
      });

      test('updates only the given fields, bumping updatedAt and keeping createdAt', async () => {
        const created = await store.plans.createPlan(freePlan);
        await tick();
        const updated = await store.plans.updatePlan('free', { cuPerSecond: 500, debugMethods: true, name: undefined });
        assert.deepEqual({ ...updated, updatedAt: undefined }, { ...created, cuPerSecond: 500, debugMethods: true, updatedAt: undefined });
        assert.ok(updated!.updatedAt > created.updatedAt);
        assert.deepEqual(await store.plans.getPlan('free'), updated);
      });

      test('answers undefined for a plan that does not exist', async () => {
        assert.equal(await store.plans.getPlan('nope'), undefined);
        assert.equal(await store.plans.updatePlan('nope', { name: 'x' }), undefined);
        assert.equal(await store.plans.deletePlan('nope'), false);
      });

      test('deletes a plan no account is on', async () => {
        await store.plans.createPlan(freePlan);
        assert.equal(await store.plans.deletePlan('free'), true);
        assert.equal(await store.plans.getPlan('free'), undefined);
      });

      test('refuses to delete a plan while an account is on it', async () => {
        await store.plans.createPlan(freePlan);
        await store.accounts.createAccount(newAccount());
        await assert.rejects(store.plans.deletePlan('free'), conflict(/plan "free" is in use/));
        assert.ok(await store.plans.getPlan('free'));
      });
    });

  });
}
