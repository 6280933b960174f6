import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach } from 'node:test';
import { DEFAULT_PERMISSIONS } from './keys/api-key.ts';
import { newKeyMaterial } from '../auth/key-value.ts';
import { StoreConflictError } from './store-errors.ts';
import type { NewAccount } from './accounts/account-store.ts';
import type { NewApiKey } from './keys/key-store.ts';
import type { NewPlan } from './plans/plan-store.ts';
import type { Stores } from './stores.ts';

export const freePlan: NewPlan = { id: 'free', name: 'Free', cuPerSecond: 330, cuPerMonth: 30_000_000, maxBatchSize: 100, debugMethods: false, maxFilters: 50 };
export const bigPlan: NewPlan = { id: 'enterprise', name: 'Enterprise', cuPerSecond: 5000, cuPerMonth: 10_000_000_000, maxBatchSize: 1000, debugMethods: true, maxFilters: 5000, maxKeys: 1000, maxWebhooks: 500, subscriptionsPerKey: 1000, subscriptionsPerAccount: 5000, requestLogHours: 72, requestLogMax: 100_000 };

export const newAccount = (over: Partial<NewAccount> = {}): NewAccount => ({
  id: randomUUID(), name: 'Ada', email: `ada-${randomUUID()}@example.com`, passwordHash: null, status: 'active',
  role: 'member', planId: 'free', ...over,
});

/** A key record as the service makes it: from `newKeyMaterial`, so only the hash ever reaches the store. */
export const newKey = (accountId: string, over: Partial<NewApiKey> = {}): NewApiKey => ({
  ...newKeyMaterial('test').key, accountId, type: 'Standard', permissions: [...DEFAULT_PERMISSIONS], ipAllowlist: [],
  originAllowlist: [], networkAllowlist: [], methodAllowlist: [], expiresAt: null, ...over,
});

export const isIso = (s: string) => assert.equal(new Date(s).toISOString(), s);
export const conflict = (pattern: RegExp) => (err: unknown) => err instanceof StoreConflictError && pattern.test(err.message);
/** Lets the clock move past the millisecond a record was written in. */
export const tick = () => sleep(5);

/** What each part of the store contract is run with: a factory answering an empty, migrated store, and a second handle. */
export interface StoreContract {
  make: () => Promise<Stores>;
  /** Opens another instance on the database of the store `make` answered last, without emptying it. */
  sameDatabase: () => Promise<Stores>;
}

/**
 * The store a contract part's tests run on: a fresh one for each test (made before it, closed after it), reached
 * through this one object, so that a part reads as plain calls on `store`.
 */
export function storePerTest(c: StoreContract): Stores {
  let current: Stores | undefined;
  beforeEach(async () => {
    current = await c.make();
  });
  afterEach(() => current?.close());
  return new Proxy({} as Stores, {
    get: (_, name) => {
      const value: unknown = Reflect.get(current!, name);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}
