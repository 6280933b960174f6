import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { DEFAULT_PERMISSIONS } from './model.ts';
import { newKeyMaterial } from '../auth/key-value.ts';
import { PLAN_LIMITS } from '../config/plan-limits.ts';
import { StoreConflictError } from './store-errors.ts';
import type { AccountToken } from './team/token-store.ts';
import type { NewMember } from './team/member-store.ts';
import type { NewAccount } from './accounts/account-store.ts';
import type { NewApiKey } from './keys/key-store.ts';
import type { NewPlan } from './plans/plan-store.ts';
import type { Stores as Store } from './stores.ts';
import type { UsageMinute, UsageQuery } from './usage/usage-store.ts';
import type { FiredAlert } from './alerts/alert-store.ts';

export const freePlan: NewPlan = { id: 'free', name: 'Free', cuPerSecond: 330, cuPerMonth: 30_000_000, maxBatchSize: 100, debugMethods: false, maxFilters: 50 };
export const bigPlan: NewPlan = { id: 'enterprise', name: 'Enterprise', cuPerSecond: 5000, cuPerMonth: 10_000_000_000, maxBatchSize: 1000, debugMethods: true, maxFilters: 5000, maxKeys: 1000, maxWebhooks: 500, subscriptionsPerKey: 1000, subscriptionsPerAccount: 5000 };

export const newAccount = (over: Partial<NewAccount> = {}): NewAccount => ({
  id: randomUUID(), name: 'Ada', email: `ada-${randomUUID()}@example.com`, passwordHash: null, status: 'active',
  role: 'member', planId: 'free', ...over,
});

/** A key record as the service makes it: from `newKeyMaterial`, so only the hash ever reaches the store. */
export const newKey = (accountId: string, over: Partial<NewApiKey> = {}): NewApiKey => ({
  ...newKeyMaterial('test').key, accountId, type: 'Standard', permissions: [...DEFAULT_PERMISSIONS], ipAllowlist: [],
  originAllowlist: [], networkAllowlist: [], methodAllowlist: [], expiresAt: null, ...over,
});

const isIso = (s: string) => assert.equal(new Date(s).toISOString(), s);
const conflict = (pattern: RegExp) => (err: unknown) => err instanceof StoreConflictError && pattern.test(err.message);
/** Lets the clock move past the millisecond a record was written in. */
const tick = () => sleep(5);

export interface ContractOptions {
  skip?: string;
  /** Opens another instance on the database of the store `makeStore` answered last, without emptying it. */
  sameDatabase: () => Promise<Store>;
}

/**
 * The behaviour every Store must have (STYLE principle 6): run by sqlite.test.ts and postgres.test.ts, each with
 * a factory answering an empty, migrated store.
 */
export function storeContract(name: string, makeStore: () => Promise<Store>, options: ContractOptions): void {
  describe(`${name} store`, { skip: options.skip }, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(() => store.close());

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
        const context = await store.keys.findKeyByHash(key.hash);
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

    describe('keys', () => {
      let account: string;
      beforeEach(async () => {
        await store.plans.createPlan(freePlan);
        account = (await store.accounts.createAccount(newAccount())).id;
      });

      test('keeps a key with its type, permissions and restrictions', async () => {
        const input = newKey(account, {
          type: 'Restricted', permissions: ['rpc', 'admin'], ipAllowlist: ['10.0.0.0/8', '2001:db8::1'],
          originAllowlist: ['https://app.example'], networkAllowlist: ['mainnet'], methodAllowlist: ['eth_call', 'eth_chainId'],
          expiresAt: '2030-01-01T00:00:00Z',
        });
        const created = await store.keys.insertKey(input);
        assert.deepEqual(created, { ...input, expiresAt: '2030-01-01T00:00:00.000Z', createdBy: null, createdAt: created.createdAt, lastUsedAt: null, revokedAt: null });
        isIso(created.createdAt);
        assert.deepEqual(await store.keys.getKey(input.id), created);
        assert.equal(await store.keys.getKey('nope'), undefined);
      });

      test('refuses a key for an unknown account', async () => {
        await assert.rejects(store.keys.insertKey(newKey('ghost')), conflict(/unknown account "ghost"/));
      });

      test('refuses a second key with the same hash', async () => {
        const k = await store.keys.insertKey(newKey(account));
        await assert.rejects(store.keys.insertKey(newKey(account, { hash: k.hash })), conflict(/already exists/));
      });

      test("lists only the account's own keys", async () => {
        const other = (await store.accounts.createAccount(newAccount())).id;
        const mine = [await store.keys.insertKey(newKey(account)), await store.keys.insertKey(newKey(account))];
        await store.keys.insertKey(newKey(other));
        assert.deepEqual((await store.keys.listKeys(account)).map((k) => k.id).sort(), mine.map((k) => k.id).sort());
        assert.deepEqual(await store.keys.listKeys('nobody'), []);
      });

      test('lists keys in pages, oldest first, each after the last of the one before; counts the active ones', async () => {
        const acct = (await store.accounts.createAccount(newAccount())).id;
        const made = [];
        for (let i = 0; i < 5; i++) made.push(await store.keys.insertKey(newKey(acct)));
        const all = await store.keys.listKeys(acct);
        const pages = [];
        let after: { createdAt: string; id: string } | undefined;
        for (;;) {
          const page = await store.keys.listKeys(acct, { limit: 2, after });
          if (page.length === 0) break;
          pages.push(page.map((k) => k.id));
          after = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
        }
        assert.deepEqual(pages.map((p) => p.length), [2, 2, 1]);
        assert.deepEqual(pages.flat(), all.map((k) => k.id));
        assert.equal(await store.keys.countActiveKeys(acct), 5);
        await store.keys.revokeKey(made[0].id);
        assert.equal(await store.keys.countActiveKeys(acct), 4);
      });

      test('finds a key by its hash together with its account and plan', async () => {
        const key = await store.keys.insertKey(newKey(account));
        const ctx = await store.keys.findKeyByHash(key.hash);
        assert.deepEqual(ctx, { key, account: await store.accounts.getAccount(account), plan: await store.plans.getPlan('free') });
        assert.equal(await store.keys.findKeyByHash('0'.repeat(64)), undefined);
      });

      test("the key lookup reflects the account's current plan and status", async () => {
        await store.plans.createPlan(bigPlan);
        const key = await store.keys.insertKey(newKey(account));
        await store.accounts.updateAccount(account, { planId: 'enterprise', status: 'suspended' });
        const ctx = (await store.keys.findKeyByHash(key.hash))!;
        assert.equal(ctx.plan.cuPerMonth, 10_000_000_000);
        assert.equal(ctx.account.status, 'suspended');
      });

      test('updates a key name and restrictions, and can clear its expiry', async () => {
        const key = await store.keys.insertKey(newKey(account, { expiresAt: '2030-01-01T00:00:00.000Z' }));
        const patch = { name: 'renamed', ipAllowlist: ['192.0.2.1'], originAllowlist: [], networkAllowlist: ['testnet'], methodAllowlist: ['eth_blockNumber'], expiresAt: null };
        const updated = await store.keys.updateKey(key.id, patch);
        assert.deepEqual(updated, { ...key, ...patch });
        assert.deepEqual((await store.keys.findKeyByHash(key.hash))!.key, updated);
        assert.equal(await store.keys.updateKey('nope', { name: 'x' }), undefined);
      });

      test('revokes a key once: a second revocation keeps the first time', async () => {
        const key = await store.keys.insertKey(newKey(account));
        const first = await store.keys.revokeKey(key.id);
        isIso(first!.revokedAt!);
        await tick();
        const second = await store.keys.revokeKey(key.id);
        assert.equal(second!.revokedAt, first!.revokedAt);
        assert.equal(await store.keys.revokeKey('nope'), undefined);
      });

      test('still finds a revoked key by hash, with its revocation time, so the resolver can refuse it', async () => {
        const key = await store.keys.insertKey(newKey(account));
        const revoked = await store.keys.revokeKey(key.id);
        assert.equal((await store.keys.findKeyByHash(key.hash))!.key.revokedAt, revoked!.revokedAt);
      });

      test('records the last use of many keys in one call, ignoring keys that are gone', async () => {
        const [a, b, c] = [await store.keys.insertKey(newKey(account)), await store.keys.insertKey(newKey(account)), await store.keys.insertKey(newKey(account))];
        await store.keys.touchKeys(new Map([[a.id, '2026-01-01T10:00:00.000Z'], [b.id, '2026-01-01T11:00:00Z'], ['gone', '2026-01-01T12:00:00.000Z']]));
        await store.keys.touchKeys(new Map());
        assert.equal((await store.keys.getKey(a.id))!.lastUsedAt, '2026-01-01T10:00:00.000Z');
        assert.equal((await store.keys.getKey(b.id))!.lastUsedAt, '2026-01-01T11:00:00.000Z');
        assert.equal((await store.keys.getKey(c.id))!.lastUsedAt, null);
      });

      test('never moves a last use backwards (instances flush in any order)', async () => {
        const key = await store.keys.insertKey(newKey(account));
        await store.keys.touchKeys(new Map([[key.id, '2026-01-01T10:00:00.000Z']]));
        await store.keys.touchKeys(new Map([[key.id, '2026-01-01T09:00:00.000Z']]));
        assert.equal((await store.keys.getKey(key.id))!.lastUsedAt, '2026-01-01T10:00:00.000Z');
      });
    });

    describe('usage', () => {
      let a: string;
      let b: string;
      beforeEach(async () => {
        await store.plans.createPlan(freePlan);
        a = (await store.accounts.createAccount(newAccount())).id;
        b = (await store.accounts.createAccount(newAccount())).id;
      });

      test('adds up the compute units of several flushes, per account', async () => {
        await store.usage.addUsage('2026-03', new Map([[a, 120], [b, 7]]));
        await store.usage.addUsage('2026-03', new Map([[a, 30]]));
        await store.usage.addUsage('2026-03', new Map());
        assert.equal(await store.usage.getUsage(a, '2026-03'), 150);
        assert.equal(await store.usage.getUsage(b, '2026-03'), 7);
      });

      test('keeps each month apart, so a new month starts from zero', async () => {
        await store.usage.addUsage('2026-03', new Map([[a, 500]]));
        await store.usage.addUsage('2026-04', new Map([[a, 1]]));
        assert.equal(await store.usage.getUsage(a, '2026-03'), 500);
        assert.equal(await store.usage.getUsage(a, '2026-04'), 1);
        assert.equal(await store.usage.getUsage(a, '2026-05'), 0);
      });

      test('a batch sent again under its id counts once (a write that timed out for its sender, then retried)', async () => {
        await store.usage.addUsage('2026-03', new Map([[a, 40], [b, 2]]), 'batch-1');
        await store.usage.addUsage('2026-03', new Map([[a, 40], [b, 2]]), 'batch-1');
        await store.usage.addUsage('2026-03', new Map([[a, 5]]), 'batch-2');
        assert.equal(await store.usage.getUsage(a, '2026-03'), 45);
        assert.equal(await store.usage.getUsage(b, '2026-03'), 2);
      });

      test('answers 0 for an account with no usage or no account at all', async () => {
        assert.equal(await store.usage.getUsage(a, '2026-03'), 0);
        assert.equal(await store.usage.getUsage('nope', '2026-03'), 0);
      });

      test('skips accounts that are gone without losing the rest of the batch', async () => {
        await store.usage.addUsage('2026-03', new Map([['gone', 10], [a, 20]]));
        assert.equal(await store.usage.getUsage(a, '2026-03'), 20);
        assert.equal(await store.usage.getUsage('gone', '2026-03'), 0);
      });

      test('keeps totals beyond 32 bits exactly, as numbers', async () => {
        await store.usage.addUsage('2026-03', new Map([[a, 3_000_000_000]]));
        await store.usage.addUsage('2026-03', new Map([[a, 3_000_000_001]]));
        const used = await store.usage.getUsage(a, '2026-03');
        assert.equal(typeof used, 'number');
        assert.equal(used, 6_000_000_001);
      });

      test('refuses a malformed month or fractional units before writing anything', async () => {
        await assert.rejects(store.usage.addUsage('2026-3', new Map([[a, 1]])), TypeError);
        await assert.rejects(store.usage.addUsage('2026-13', new Map([[a, 1]])), TypeError);
        await assert.rejects(store.usage.addUsage('2026-03', new Map([[a, 1], [b, 1.5]])), TypeError);
        assert.equal(await store.usage.getUsage(a, '2026-03'), 0);
      });

      test('counts every unit when two instances flush overlapping batches at the same time', async () => {
        const other = await options.sameDatabase();
        try {
          const accounts = [a, b];
          for (let i = 0; i < 4; i++) accounts.push((await store.accounts.createAccount(newAccount())).id);
          // Each flush names the accounts in its own order: the store must not deadlock on shared rows.
          const batch = (i: number) => new Map(accounts.map((id, j) => [accounts[(i + j) % accounts.length], j + 1] as const));
          await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? other : store).usage.addUsage('2026-03', batch(i))));
          const perFlush = accounts.length * (accounts.length + 1) / 2;
          const totals = await Promise.all(accounts.map((id) => other.usage.getUsage(id, '2026-03')));
          assert.equal(totals.reduce((x, y) => x + y, 0), 20 * perFlush);
        } finally {
          await other.close();
        }
      });
    });

    describe('usage minutes and sessions', () => {
      const row = (over: Partial<UsageMinute> = {}): UsageMinute => ({
        minute: '2026-03-01T10:00', accountId: 'acc-1', keyId: 'key-1', network: 'mainnet', method: 'eth_call', code: 0,
        requests: 2, computeUnits: 52, latencyMsSum: 9, latency: [1, 1, 0, 0, 0, 0], ...over,
      });

      test('adds flushes of the same minute, key, network, method and outcome together; keeps the others apart', async () => {
        await store.usage.addUsageMinutes([row(), row({ code: -32602, computeUnits: 0 }), row({ minute: '2026-03-01T10:01' })]);
        await store.usage.addUsageMinutes([row({ requests: 3, computeUnits: 78, latencyMsSum: 1000, latency: [0, 0, 0, 1, 2, 0] })]);
        await store.usage.addUsageMinutes([]);
        const rows = await store.usage.listUsageMinutes({ from: '2026-03-01T10:00', to: '2026-03-01T10:01' });
        assert.deepEqual(rows, [
          row({ code: -32602, computeUnits: 0 }),
          row({ requests: 5, computeUnits: 130, latencyMsSum: 1009, latency: [1, 1, 0, 1, 2, 0] }),
        ]);
        assert.equal((await store.usage.listUsageMinutes({ from: '2026-03-01T00:00', to: '2026-03-02T00:00', keyId: 'key-1', network: 'mainnet' })).length, 3);
        assert.equal((await store.usage.listUsageMinutes({ from: '2026-03-01T00:00', to: '2026-03-02T00:00', accountId: 'other' })).length, 0);
        await store.usage.pruneUsageMinutes('2026-03-01T10:01');
        assert.deepEqual((await store.usage.listUsageMinutes({ from: '2026-01-01T00:00', to: '2027-01-01T00:00' })).map((r) => r.minute), ['2026-03-01T10:01']);
      });

      test('rows sent again under their batch id count once', async () => {
        await store.usage.addUsageMinutes([row()], 'rows-1');
        await store.usage.addUsageMinutes([row()], 'rows-1');
        await store.usage.addUsageMinutes([row({ requests: 1, computeUnits: 26, latencyMsSum: 1, latency: [1, 0, 0, 0, 0, 0] })], 'rows-2');
        const rows = await store.usage.listUsageMinutes({ from: '2026-03-01T10:00', to: '2026-03-01T10:01' });
        assert.deepEqual(rows, [row({ requests: 3, computeUnits: 78, latencyMsSum: 10, latency: [2, 1, 0, 0, 0, 0] })]);
      });

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
    });

    // Issue 22: members, tokens, mail outbox
    describe('members, tokens and the mail outbox', () => {
      const T = (m: number) => new Date(Date.UTC(2026, 10, 24, 12, m)).toISOString();
      const member = (accountId: string, over: Partial<NewMember> = {}): NewMember => ({
        id: randomUUID(), accountId, email: `m-${randomUUID()}@Example.com`, name: 'Grace', passwordHash: 'h', role: 'developer', ...over,
      });

      test('members: kept with every field, found by email in any case, unique by email, listed per account, changed and deleted', async () => {
        await store.plans.createPlan(freePlan);
        const acct = (await store.accounts.createAccount(newAccount())).id;
        const other = (await store.accounts.createAccount(newAccount())).id;
        const m = await store.members.createMember(member(acct, { email: 'Grace@Example.com' }));
        assert.deepEqual({ ...m, createdAt: undefined, updatedAt: undefined }, { ...member(acct), id: m.id, email: 'Grace@Example.com', createdAt: undefined, updatedAt: undefined });
        isIso(m.createdAt);
        assert.deepEqual(await store.members.getMember(m.id), m);
        assert.deepEqual(await store.members.getMemberByEmail('grace@example.COM'), m);
        await assert.rejects(store.members.createMember(member(other, { email: 'GRACE@example.com' })), conflict(/already exists/));
        await store.members.createMember(member(other));
        assert.deepEqual((await store.members.listMembers(acct)).map((x) => x.id), [m.id]);
        await tick();
        const changed = await store.members.updateMember(m.id, { role: 'viewer', passwordHash: 'h2' });
        assert.equal(changed?.role, 'viewer');
        assert.equal(changed?.passwordHash, 'h2');
        assert.equal(changed?.name, 'Grace');
        assert.notEqual(changed?.updatedAt, m.updatedAt);
        assert.equal(await store.members.updateMember('nobody', { role: 'viewer' }), undefined);
        assert.equal(await store.members.deleteMember(m.id), true);
        assert.equal(await store.members.getMember(m.id), undefined);
        assert.equal(await store.members.deleteMember(m.id), false);
      });

      test('a key keeps its maker; revoking the keys a member made leaves the others and counts only those not yet revoked', async () => {
        await store.plans.createPlan(freePlan);
        const acct = (await store.accounts.createAccount(newAccount())).id;
        const m = await store.members.createMember(member(acct));
        const made = await store.keys.insertKey(newKey(acct, { createdBy: m.id }));
        const already = await store.keys.insertKey(newKey(acct, { createdBy: m.id }));
        await store.keys.revokeKey(already.id);
        const owners = await store.keys.insertKey(newKey(acct));
        assert.equal(made.createdBy, m.id);
        assert.equal(owners.createdBy, null);
        assert.equal((await store.keys.getKey(made.id))?.createdBy, m.id);
        assert.equal((await store.keys.findKeyByHash(made.hash))?.key.createdBy, m.id);
        const revokedAt = (await store.keys.getKey(already.id))!.revokedAt;
        assert.equal(await store.keys.revokeKeysMadeBy(m.id), 1);
        assert.ok((await store.keys.getKey(made.id))?.revokedAt);
        assert.equal((await store.keys.getKey(already.id))?.revokedAt, revokedAt, 'an earlier revocation keeps its time');
        assert.equal((await store.keys.getKey(owners.id))?.revokedAt, null);
        assert.equal(await store.keys.revokeKeysMadeBy(m.id), 0);
      });

      test("sessions carry their member; a member's or the account's own login's end apart; a deleted member's end", async () => {
        await store.plans.createPlan(freePlan);
        const acct = (await store.accounts.createAccount(newAccount())).id;
        const a = await store.members.createMember(member(acct));
        const b = await store.members.createMember(member(acct));
        const soon = new Date(Date.now() + 60_000).toISOString();
        const session = (idHash: string, memberId: string | null) => store.sessions.createSession({ idHash, accountId: acct, memberId, csrf: 'c', createdAt: new Date().toISOString(), expiresAt: soon });
        await session('own', null);
        await session('a1', a.id);
        await session('b1', b.id);
        assert.equal((await store.sessions.getSession('a1'))?.memberId, a.id);
        assert.equal((await store.sessions.getSession('own'))?.memberId, null);
        await store.sessions.deleteSessionsOf(acct, a.id);
        assert.equal(await store.sessions.getSession('a1'), undefined);
        assert.ok(await store.sessions.getSession('own'));
        await store.sessions.deleteSessionsOf(acct, null);
        assert.equal(await store.sessions.getSession('own'), undefined);
        assert.ok(await store.sessions.getSession('b1'));
        await store.members.deleteMember(b.id);
        assert.equal(await store.sessions.getSession('b1'), undefined);
      });

      test('a token is consumed once, never after it expired, only as its kind; invitations listed and withdrawn', async () => {
        await store.plans.createPlan(freePlan);
        const acct = (await store.accounts.createAccount(newAccount())).id;
        const token = (idHash: string, over: Partial<AccountToken> = {}): AccountToken => ({
          idHash, id: randomUUID(), kind: 'invite', accountId: acct, memberId: null, email: 'new@example.com', role: 'viewer',
          createdAt: T(0), expiresAt: T(60), usedAt: null, ...over,
        });
        await store.tokens.createAccountToken(token('i1'));
        await store.tokens.createAccountToken(token('i2', { createdAt: T(1), expiresAt: T(10) }));
        await store.tokens.createAccountToken(token('r1', { kind: 'reset', role: null }));
        assert.deepEqual((await store.tokens.listInvitations(acct, T(5))).map((t) => t.idHash), ['i1', 'i2']);
        assert.deepEqual((await store.tokens.listInvitations(acct, T(20))).map((t) => t.idHash), ['i1'], 'expired ones are not pending');
        assert.equal(await store.tokens.consumeAccountToken('r1', 'invite', T(1)), undefined, 'a reset token is no invitation');
        assert.equal(await store.tokens.consumeAccountToken('i2', 'invite', T(10)), undefined, 'expired');
        const used = await Promise.all([store.tokens.consumeAccountToken('i1', 'invite', T(1)), store.tokens.consumeAccountToken('i1', 'invite', T(1))]);
        assert.equal(used.filter(Boolean).length, 1, 'of two concurrent uses exactly one gets it');
        const got = used.find(Boolean)!;
        assert.deepEqual({ ...got, usedAt: undefined }, { ...token('i1'), id: got.id, usedAt: undefined });
        assert.equal(got.usedAt, T(1));
        assert.equal(await store.tokens.consumeAccountToken('i1', 'invite', T(2)), undefined, 'single use');
        assert.deepEqual(await store.tokens.listInvitations(acct, T(15)), [], 'used ones are not pending (nor expired ones)');
        await store.tokens.createAccountToken(token('i3'));
        const [pending] = await store.tokens.listInvitations(acct, T(5));
        assert.equal(await store.tokens.deleteInvitation('another-account', pending.id), false);
        assert.equal(await store.tokens.deleteInvitation(acct, pending.id), true);
        assert.equal(await store.tokens.consumeAccountToken('i3', 'invite', T(1)), undefined, 'withdrawn');
        assert.equal((await store.tokens.consumeAccountToken('r1', 'reset', T(1)))?.kind, 'reset');
        assert.equal(await store.tokens.pruneAccountTokens(T(30)), 3, 'the used invitation and reset, and the expired invitation');
      });

      test('mail: leased to one owner, retried when due, body emptied once sent or given up, pruned after', async () => {
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
    });

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

    describe('usage roll-up, paging and retention', () => {
      const row = (over: Partial<UsageMinute> = {}): UsageMinute => ({
        minute: '2026-03-01T10:00', accountId: 'acc-1', keyId: 'key-1', network: 'mainnet', method: 'eth_call', code: 0,
        requests: 1, computeUnits: 26, latencyMsSum: 3, latency: [1, 0, 0, 0, 0, 0], ...over,
      });
      const all = () => store.usage.listUsageMinutes({ from: '2026-01-01T00:00', to: '2027-01-01T00:00' });
      const sum = (rows: UsageMinute[]) => rows.reduce((t, r) => ({ requests: t.requests + r.requests, computeUnits: t.computeUnits + r.computeUnits, latencyMsSum: t.latencyMsSum + r.latencyMsSum, l0: t.l0 + r.latency[0] }), { requests: 0, computeUnits: 0, latencyMsSum: 0, l0: 0 });

      test('rolls up one hour at a time into one row per cell at its first minute: fewer rows, the same totals', async () => {
        const rows: UsageMinute[] = [];
        for (let m = 0; m < 60; m++) {
          const minute = `2026-03-01T10:${String(m).padStart(2, '0')}`;
          rows.push(row({ minute }), row({ minute, method: 'eth_chainId', computeUnits: 0 }), row({ minute, keyId: 'key-2', accountId: 'acc-2' }));
        }
        rows.push(row({ minute: '2026-03-01T11:05' }), row({ minute: '2026-03-01T12:00' }));
        await store.usage.addUsageMinutes(rows);
        const before = sum(await all());
        const first = await store.usage.rollupUsageHour('2026-01-01T00:00', '2026-03-01T12:00');
        assert.deepEqual(first, { hour: '2026-03-01T10:00', removed: 177 });
        const second = await store.usage.rollupUsageHour('2026-03-01T11:00', '2026-03-01T12:00');
        assert.deepEqual(second, { hour: '2026-03-01T11:00', removed: 1 });
        assert.equal(await store.usage.rollupUsageHour('2026-03-01T12:00', '2026-03-01T12:00'), undefined, 'the hour not yet due stays');
        const after = await all();
        console.log(`usage roll-up: ${rows.length} rows -> ${after.length} rows, ${before.requests} requests before and after`);
        assert.equal(after.length, 5);
        assert.deepEqual(sum(after), before);
        assert.deepEqual(after.find((r) => r.minute === '2026-03-01T10:00' && r.keyId === 'key-1' && r.method === 'eth_call'), row({ requests: 60, computeUnits: 1560, latencyMsSum: 180, latency: [60, 0, 0, 0, 0, 0] }));
        await store.usage.addUsageMinutes([row({ minute: '2026-03-01T10:30' })]);
        assert.equal((await store.usage.rollupUsageHour('2026-01-01T00:00', '2026-03-01T12:00'))?.removed, 1, 'a late flush into a rolled hour is rolled up again');
        assert.equal(sum(await all()).requests, before.requests + 1);
      });

      test('reads rows in pages, each after the last of the one before, as one read would', async () => {
        const rows: UsageMinute[] = [];
        for (let m = 0; m < 7; m++) for (const keyId of ['k-a', 'k-b']) for (const code of [0, 3]) rows.push(row({ minute: `2026-03-01T10:0${m}`, keyId, code }));
        rows.push(row({ accountId: 'acc-2', keyId: 'k-z' }));
        await store.usage.addUsageMinutes(rows);
        const q = { from: '2026-03-01T00:00', to: '2026-03-02T00:00', accountId: 'acc-1' };
        const whole = await store.usage.listUsageMinutes(q);
        const paged: UsageMinute[] = [];
        for (let page = await store.usage.listUsageMinutes({ ...q, limit: 5 }); page.length > 0;) {
          assert.ok(page.length <= 5);
          paged.push(...page);
          const last = page[page.length - 1];
          page = await store.usage.listUsageMinutes({ ...q, limit: 5, after: last });
        }
        assert.equal(whole.length, 28);
        assert.deepEqual(paged, whole);
      });

      test('counts the rows a read would answer, no further than a cap', async () => {
        const rows: UsageMinute[] = [];
        for (let m = 0; m < 5; m++) for (const keyId of ['k-a', 'k-b']) for (const network of ['mainnet', 'sepolia']) rows.push(row({ minute: `2026-03-01T10:0${m}`, keyId, network }));
        rows.push(row({ accountId: 'acc-2', keyId: 'k-z' }), row({ minute: '2026-03-01T10:05' }));
        await store.usage.addUsageMinutes(rows);
        const q = { from: '2026-03-01T10:00', to: '2026-03-01T10:05', accountId: 'acc-1' };
        for (const f of [q, { ...q, keyId: 'k-a' }, { ...q, network: 'sepolia' }, { ...q, keyId: 'k-b', network: 'mainnet' }, { ...q, accountId: 'acc-2' }, { ...q, accountId: undefined }]) {
          const n = (await store.usage.listUsageMinutes(f)).length;
          assert.equal(await store.usage.countUsageMinutes(f, 1000), n, `as many as the read of ${JSON.stringify(f)}`);
          assert.equal(await store.usage.countUsageMinutes(f, 3), Math.min(n, 3), `up to the cap for ${JSON.stringify(f)}`);
        }
        assert.equal(await store.usage.countUsageMinutes(q, 1000), 20, 'the end of the range is left out, and the other account');
        assert.equal(await store.usage.countUsageMinutes(q, 21), 20);
        assert.equal(await store.usage.countUsageMinutes(q, 20), 20);
        assert.equal(await store.usage.countUsageMinutes(q, 19), 19);
        assert.equal(await store.usage.countUsageMinutes({ ...q, from: '2026-03-02T00:00', to: '2026-03-03T00:00' }, 1000), 0);
      });

      test('prunes keys revoked before a time: their usage folded into the account\'s (revoked) rows; other keys kept', async () => {
        await store.plans.createPlan(freePlan);
        const a = (await store.accounts.createAccount(newAccount())).id;
        const b = (await store.accounts.createAccount(newAccount())).id;
        const oldA = await store.keys.insertKey(newKey(a));
        const oldB = await store.keys.insertKey(newKey(b));
        const live = await store.keys.insertKey(newKey(a));
        const recent = await store.keys.insertKey(newKey(a));
        await store.keys.revokeKey(oldA.id);
        await store.keys.revokeKey(oldB.id);
        await tick();
        const cutoff = new Date().toISOString();
        await tick();
        await store.keys.revokeKey(recent.id);
        const use = (accountId: string, keyId: string, minute = '2026-03-01T10:00') => row({ accountId, keyId, minute });
        await store.usage.addUsageMinutes([use(a, oldA.id), use(a, oldA.id, '2026-03-01T10:01'), use(b, oldB.id), use(a, live.id), use(a, recent.id)]);
        const before = sum(await all());
        assert.equal(await store.keys.pruneRevokedKeys(cutoff, 1), 1, 'at most `limit` keys a call');
        assert.equal(await store.keys.pruneRevokedKeys(cutoff, 100), 1);
        assert.equal(await store.keys.pruneRevokedKeys(cutoff, 100), 0);
        assert.equal(await store.keys.getKey(oldA.id), undefined);
        assert.equal(await store.keys.getKey(oldB.id), undefined);
        assert.ok(await store.keys.getKey(live.id), 'a live key stays');
        assert.ok(await store.keys.getKey(recent.id), 'a key revoked after the cutoff stays');
        const after = await all();
        assert.deepEqual(sum(after), before, 'no call is lost');
        assert.deepEqual(after.map((r) => `${r.minute} ${r.keyId} ${r.requests}`).sort(), [
          `2026-03-01T10:00 (revoked):${a} 1`, `2026-03-01T10:00 (revoked):${b} 1`, `2026-03-01T10:00 ${live.id} 1`,
          `2026-03-01T10:00 ${recent.id} 1`, `2026-03-01T10:01 (revoked):${a} 1`,
        ].sort());
        assert.ok(after.filter((r) => r.keyId === `(revoked):${b}`).every((r) => r.accountId === b), 'each account keeps its own');
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

      test('prunes webhook test events written before a time, delivered or not; other events stay', async () => {
        await store.plans.createPlan(freePlan);
        const acct = (await store.accounts.createAccount(newAccount())).id;
        await store.webhooks.createWebhook({ id: 'wt', accountId: acct, network: 'mainnet', kind: 'block.mined', url: 'https://example.com/h', options: {}, secret: 's', status: 'active' });
        const T = (h: number) => new Date(Date.UTC(2026, 10, 23, h)).toISOString();
        const ev = (id: string, type: string, h: number) => ({ id, webhookId: 'wt', type, body: '{}', createdAt: T(h) });
        await store.webhookEvents.addWebhookEvents([ev('t-old', 'webhook.test', 1), ev('b-old', 'block.mined', 1), ev('t-new', 'webhook.test', 5)]);
        assert.equal(await store.webhookEvents.pruneWebhookTestEvents(T(3)), 1);
        assert.deepEqual((await store.webhookEvents.listWebhookEvents('wt', 10)).map((e) => e.id).sort(), ['b-old', 't-new']);
      });
    });

    describe('usage filters and alerts', () => {
      const row = (over: Partial<UsageMinute> = {}): UsageMinute => ({
        minute: '2026-03-01T10:00', accountId: 'acc-1', keyId: 'key-1', network: 'mainnet', method: 'eth_call', code: 0,
        requests: 1, computeUnits: 26, latencyMsSum: 3, latency: [1, 0, 0, 0, 0, 0], ...over,
      });

      test('filters usage by method and by outcome (results, errors, one code), in reads, counts and sums alike', async () => {
        await store.usage.addUsageMinutes([
          row(), row({ method: 'eth_chainId', requests: 4, computeUnits: 0 }), row({ code: -32005, requests: 2, computeUnits: 0 }),
          row({ code: -32010, method: '(refused)', requests: 3, computeUnits: 0 }), row({ accountId: 'acc-2', keyId: 'key-9', code: -32005 }),
        ]);
        const q = { from: '2026-03-01T00:00', to: '2026-03-02T00:00', accountId: 'acc-1' };
        const cases: Array<[Partial<UsageQuery>, number, number, number]> = [
          [{}, 10, 5, 26], [{ method: 'eth_call' }, 3, 2, 26], [{ status: 'ok' }, 5, 0, 26], [{ status: 'error' }, 5, 5, 0],
          [{ status: -32005 }, 2, 2, 0], [{ status: -32010, method: '(refused)' }, 3, 3, 0], [{ method: 'eth_call', status: 'ok' }, 1, 0, 26],
        ];
        for (const [f, requests, errors, computeUnits] of cases) {
          const rows = await store.usage.listUsageMinutes({ ...q, ...f });
          assert.equal(rows.reduce((n, r) => n + r.requests, 0), requests, `read of ${JSON.stringify(f)}`);
          assert.equal(await store.usage.countUsageMinutes({ ...q, ...f }, 100), rows.length, `count of ${JSON.stringify(f)}`);
          assert.deepEqual(await store.usage.sumUsageMinutes({ ...q, ...f }), { requests, errors, computeUnits }, `sums of ${JSON.stringify(f)}`);
        }
        assert.deepEqual(await store.usage.sumUsageMinutes({ ...q, from: '2026-04-01T00:00', to: '2026-04-02T00:00' }), { requests: 0, errors: 0, computeUnits: 0 });
      });

      test('keeps alert settings per account: none, then written, then replaced; listed for the checker', async () => {
        await store.plans.createPlan(freePlan);
        const a = await store.accounts.createAccount(newAccount());
        const b = await store.accounts.createAccount(newAccount());
        assert.equal(await store.alerts.getAlertSettings(a.id), undefined);
        const first = { quotaPercents: [75, 90, 100], errorRate: { percent: 5, minutes: 15, minRequests: 20 }, email: true };
        await store.alerts.putAlertSettings(a.id, first, new Date().toISOString());
        assert.deepEqual(await store.alerts.getAlertSettings(a.id), first);
        const second = { quotaPercents: [50], errorRate: null, email: false };
        await store.alerts.putAlertSettings(a.id, second, new Date().toISOString());
        await store.alerts.putAlertSettings(b.id, first, new Date().toISOString());
        assert.deepEqual(await store.alerts.getAlertSettings(a.id), second);
        assert.deepEqual((await store.alerts.listAlertSettings()).sort((x, y) => x.accountId.localeCompare(y.accountId)),
          [{ accountId: a.id, settings: second }, { accountId: b.id, settings: first }].sort((x, y) => x.accountId.localeCompare(y.accountId)));
      });

      test('an alert is claimed once per account, kind, threshold and period, also by two instances at once; an open one re-arms', async () => {
        await store.plans.createPlan(freePlan);
        const a = await store.accounts.createAccount(newAccount());
        const other = await options.sameDatabase();
        try {
          const fired = (over: Partial<FiredAlert> = {}): FiredAlert => ({ accountId: a.id, kind: 'quota', threshold: 75, period: '2026-03', firedAt: '2026-03-20T10:00:00.000Z', value: 76.5, ...over });
          const claims = await Promise.all([store.alerts.claimAlert(fired()), other.alerts.claimAlert(fired()), store.alerts.claimAlert(fired()), other.alerts.claimAlert(fired())]);
          assert.equal(claims.filter(Boolean).length, 1, 'exactly one of four concurrent claims wins');
          assert.equal(await store.alerts.claimAlert(fired({ threshold: 90, value: 91 })), true, 'another threshold is another alert');
          assert.equal(await store.alerts.claimAlert(fired({ period: '2026-04', firedAt: '2026-04-02T10:00:00.000Z' })), true, 'a new month re-arms a quota alert');
          const open = fired({ kind: 'errorRate', threshold: 5, period: 'open', firedAt: '2026-03-20T11:00:00.000Z', value: 12.5 });
          assert.equal(await store.alerts.claimAlert(open), true);
          assert.equal(await other.alerts.claimAlert({ ...open, firedAt: '2026-03-20T11:01:00.000Z' }), false, 'still open: not again');
          assert.equal(await store.alerts.closeAlert(a.id, 'errorRate', 5), true);
          assert.equal(await other.alerts.closeAlert(a.id, 'errorRate', 5), false, 'closed once');
          assert.equal(await other.alerts.claimAlert({ ...open, firedAt: '2026-03-20T12:00:00.000Z' }), true, 're-armed: fires again');
          const recent = await store.alerts.listFiredAlerts(a.id, 10);
          assert.deepEqual(recent.map((r) => [r.kind, r.threshold, r.period, r.firedAt, r.value]), [
            ['quota', 75, '2026-04', '2026-04-02T10:00:00.000Z', 76.5],
            ['errorRate', 5, 'open', '2026-03-20T12:00:00.000Z', 12.5],
            ['errorRate', 5, '2026-03-20T11:00:00.000Z', '2026-03-20T11:00:00.000Z', 12.5],
            ['quota', 75, '2026-03', '2026-03-20T10:00:00.000Z', 76.5],
            ['quota', 90, '2026-03', '2026-03-20T10:00:00.000Z', 91],
          ]);
          assert.equal((await store.alerts.listFiredAlerts(a.id, 2)).length, 2);
        } finally {
          await other.close();
        }
      });
    });

    describe('meta and health', () => {
      test('keeps and overwrites meta values', async () => {
        assert.equal(await store.meta.getMeta('bootstrapped'), undefined);
        await store.meta.setMeta('bootstrapped', 'a');
        await store.meta.setMeta('bootstrapped', 'b');
        assert.equal(await store.meta.getMeta('bootstrapped'), 'b');
      });

      test('answers a ping, and closing twice is harmless', async () => {
        await store.ping();
        await store.close();
        await store.close();
      });
    });
  });
}
