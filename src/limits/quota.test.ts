import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { sqliteStores } from '../store/open-store.ts';
import type { UsageStore } from '../store/usage/usage-store.ts';
import { freePlan, newAccount } from '../store/store.contract.ts';
import { monthOf, QuotaTracker } from './quota.ts';

test('a usage write that fails for the gateway but reached the store is sent again once and counted once', async () => {
  const store = sqliteStores(':memory:');
  await store.plans.createPlan(freePlan);
  const account = (await store.accounts.createAccount(newAccount())).id;
  // The first write is applied, then its answer is lost (a time-out while the database commits it).
  let lose = true;
  const flaky = Object.create(store.usage, {
    addUsage: {
      value: async (month: string, batch: ReadonlyMap<string, number>, id?: string) => {
        await store.usage.addUsage(month, batch, id);
        if (lose) { lose = false; throw new Error('query timed out'); }
      },
    },
  }) as UsageStore;
  const quota = new QuotaTracker(flaky, 60_000, pino({ level: 'silent' }));
  quota.add(account, 30);
  await quota.flush(); // applied, but the gateway saw it fail
  quota.add(account, 7);
  await quota.flush(); // the same batch again, then the 7 that waited behind it
  const month = monthOf(Date.now());
  assert.equal(await store.usage.getUsage(account, month), 37, 'the 30 once, and the 7');
  assert.equal(quota.usedBy(account), 37);
  await quota.close();
  await store.close();
});
