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
      value: async (month: string, accounts: readonly string[], units: readonly number[], id?: string) => {
        const totals = await store.usage.addUsage(month, accounts, units, id);
        if (lose) { lose = false; throw new Error('query timed out'); }
        return totals;
      },
    },
  }) as UsageStore;
  const quota = new QuotaTracker(flaky, { flushMs: 60_000 }, pino({ level: 'silent' }));
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

test('accounts seen for the first time in one turn are read together; after a flush the write answers their totals, with what others spent', async () => {
  const store = sqliteStores(':memory:');
  await store.plans.createPlan(freePlan);
  const ids: string[] = [];
  for (let i = 0; i < 300; i++) ids.push((await store.accounts.createAccount(newAccount())).id);
  const month = monthOf(Date.now());
  await store.usage.addUsage(month, ids, ids.map((_, i) => i));
  const reads: number[] = [];
  const counted = Object.create(store.usage, {
    getUsage: { value: () => assert.fail('one account at a time') },
    getUsages: { value: (asked: readonly string[], m: string) => { reads.push(asked.length); return store.usage.getUsages(asked, m); } },
  }) as UsageStore;
  const quota = new QuotaTracker(counted, { flushMs: 60_000 }, pino({ level: 'silent' }));
  const used = await Promise.all(ids.map((id) => quota.usedBy(id)));
  assert.deepEqual(used, ids.map((_, i) => i), "each account's units as the store has them");
  assert.deepEqual(reads, [300], 'one read for the 300 accounts');
  for (const id of ids) quota.add(id, 1000);
  // Another instance spends on one of them meanwhile.
  await store.usage.addUsage(month, [ids[9]], [50]);
  await quota.flush();
  assert.deepEqual(reads, [300], 'no read after the flush: its write answered the totals');
  assert.equal(quota.usedBy(ids[7]), 1007);
  assert.equal(quota.usedBy(ids[9]), 1059, "the other instance's units are in");
  await quota.close();
  await store.close();
});

test('an account first asked while a read is under way is read on its own, not answered 0', async () => {
  const store = sqliteStores(':memory:');
  await store.plans.createPlan(freePlan);
  const [a, b] = [(await store.accounts.createAccount(newAccount())).id, (await store.accounts.createAccount(newAccount())).id];
  const month = monthOf(Date.now());
  await store.usage.addUsage(month, [a, b], [5, 9]);
  let started!: () => void;
  const reading = new Promise<void>((r) => { started = r; });
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  const slow = Object.create(store.usage, {
    getUsages: { value: async (asked: readonly string[], m: string) => { started(); await held; return store.usage.getUsages(asked, m); } },
  }) as UsageStore;
  const quota = new QuotaTracker(slow, { flushMs: 60_000 }, pino({ level: 'silent' }));
  const first = quota.usedBy(a);
  await reading; // a's read is under way
  const second = quota.usedBy(b);
  release();
  assert.deepEqual([await first, await second], [5, 9]);
  await quota.close();
  await store.close();
});

test("an account's units read through a holder count in its record, and a new month's record replaces the holder's", async () => {
  const store = sqliteStores(':memory:');
  await store.plans.createPlan(freePlan);
  const account = (await store.accounts.createAccount(newAccount())).id;
  let now = Date.parse('2026-03-31T23:59:00Z');
  const quota = new QuotaTracker(store.usage, { flushMs: 60_000 }, pino({ level: 'silent' }), () => now);
  const key = { quotaUnits: undefined };
  const other = { quotaUnits: undefined };
  assert.equal(await quota.usedBy(account, key), 0);
  quota.add(account, 5, key);
  quota.add(account, 2, other);
  quota.add(account, 1);
  assert.equal(quota.usedBy(account, other), 8, 'one record for every holder and none');
  now = Date.parse('2026-04-01T00:00:01Z');
  assert.equal(await quota.usedBy(account, key), 0, "April: March's record is not used");
  quota.add(account, 3, key);
  assert.equal(quota.usedBy(account), 3);
  await quota.flush();
  assert.equal(await store.usage.getUsage(account, '2026-04'), 3);
  assert.equal(await store.usage.getUsage(account, '2026-03'), 8, "March's units written to March");
  await quota.close();
  await store.close();
});

test('units given back after a flush took the spend wait until the account spends again, and the batch of everyone else is written', async () => {
  const store = sqliteStores(':memory:');
  await store.plans.createPlan(freePlan);
  const [a, b] = [(await store.accounts.createAccount(newAccount())).id, (await store.accounts.createAccount(newAccount())).id];
  const month = monthOf(Date.now());
  const quota = new QuotaTracker(store.usage, { flushMs: 60_000 }, pino({ level: 'silent' }));
  assert.equal(await quota.usedBy(a), 0);
  quota.add(a, 40);
  await quota.flush();
  // A refund of work admitted before the flush, refused after it.
  quota.add(a, -15);
  quota.add(b, 9);
  await quota.flush();
  assert.equal(await store.usage.getUsage(b, month), 9, "the other account's units are written");
  assert.equal(await store.usage.getUsage(a, month), 40, 'the store is not asked to take units away');
  assert.equal(quota.usedBy(a), 25, 'this instance counts the refund at once');
  quota.add(a, 20);
  await quota.flush();
  assert.equal(await store.usage.getUsage(a, month), 45, 'the refund is written with the next spending');
  assert.equal(quota.usedBy(a), 45);
  await quota.close();
  await store.close();
});

test('an account far from its quota waits for the long round; one near it is written at every short round', async () => {
  const store = sqliteStores(':memory:');
  await store.plans.createPlan(freePlan);
  const far = (await store.accounts.createAccount(newAccount())).id;
  const near = (await store.accounts.createAccount(newAccount())).id;
  let now = Date.UTC(2026, 10, 15);
  const month = monthOf(now);
  const quota = new QuotaTracker(store.usage, { flushMs: 30_000, nearFlushMs: 2_000 }, pino({ level: 'silent' }), () => now);
  // Near from 1,000,000 - 10 × 100 units/s × 30 s = 970,000 units used.
  const plan = { cuPerMonth: 1_000_000, cuPerSecond: 100 };
  quota.add(far, 10, undefined, plan);
  quota.add(near, 969_990, undefined, plan);
  now += 2_000;
  await quota.round();
  assert.equal(await store.usage.getUsage(far, month), 0, 'far: not written at a short round');
  assert.equal(await store.usage.getUsage(near, month), 0, 'not near yet: 10 units short of it');
  quota.add(near, 10, undefined, plan);
  now += 2_000;
  await quota.round();
  assert.equal(await store.usage.getUsage(near, month), 970_000, 'near: written at the next short round');
  quota.add(near, 5, undefined, plan);
  now += 2_000;
  await quota.round();
  assert.equal(await store.usage.getUsage(near, month), 970_005, 'and at each after it');
  assert.equal(await store.usage.getUsage(far, month), 0);
  now += 24_000;
  await quota.round();
  assert.equal(await store.usage.getUsage(far, month), 10, 'far: written at the round 30 s after the last long one');
  assert.equal(quota.rowsWritten, 3, 'a row per account and write: the far account once');
  // Without a plan known (a caller that names none), an account is near.
  const unknown = (await store.accounts.createAccount(newAccount())).id;
  quota.add(unknown, 3);
  now += 2_000;
  await quota.round();
  assert.equal(await store.usage.getUsage(unknown, month), 3);
  // A flush (a report about to read the store, shutdown) writes every account at once.
  quota.add(far, 1, undefined, plan);
  await quota.flush();
  assert.equal(await store.usage.getUsage(far, month), 11);
  await quota.close();
  await store.close();
});
