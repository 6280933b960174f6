import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { bigPlan, conflict, freePlan, isIso, newAccount, newKey, tick, storePerTest, type StoreContract } from '../fixtures.contract.ts';
import type { UsageMinute } from '../usage/usage-store.ts';
import type { ApiKey } from './api-key.ts';
import { findKeyByHash } from './key-store.ts';

/** The keys part of the store contract (fixtures.contract.ts), run on SQLite and PostgreSQL. */
export function keyStoreContract(c: StoreContract): void {
  describe('key store', () => {
    const store = storePerTest(c);

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
        const none = {
          methodDenylist: [], contractAllowlist: [], userAgentAllowlist: [], logsMaxBlockRange: null, jwtKeys: [], jwtAudiences: [],
          previousPrefix: null, previousUntil: null, previousHash: null,
        };
        assert.deepEqual(created, { ...none, ...input, expiresAt: '2030-01-01T00:00:00.000Z', createdBy: null, createdAt: created.createdAt, lastUsedAt: null, revokedAt: null });
        isIso(created.createdAt);
        assert.deepEqual(await store.keys.getKey(input.id), created);
        assert.equal(await store.keys.getKey('nope'), undefined);
      });

      test('reports the keys, accounts and plans changed since a time: a revocation, a rule, not a last use', async () => {
        const since = new Date(Date.now() - 1000).toISOString();
        const [revoked, ruled, used] = [await store.keys.insertKey(newKey(account)), await store.keys.insertKey(newKey(account)), await store.keys.insertKey(newKey(account))];
        const before = await store.keys.changesSince(since);
        assert.deepEqual(before.keys, [], 'made, not changed');
        assert.deepEqual(before.accounts.map((a) => a.id), [account]);
        await store.keys.revokeKey(revoked.id);
        await store.keys.updateKey(ruled.id, { methodAllowlist: ['eth_chainId'] });
        await store.keys.touchKeys(new Map([[used.id, new Date().toISOString()]]));
        const after = await store.keys.changesSince(since);
        assert.deepEqual(after.keys.map((k) => k.id).sort(), [revoked.id, ruled.id].sort());
        for (const k of after.keys) isIso(k.at);
        assert.deepEqual((await store.keys.changesSince(new Date(Date.now() + 60_000).toISOString())).keys, []);
      });

      test('finds several keys by hash in one read, a rotated-out value while its overlap runs', async () => {
        const [a, b] = [await store.keys.insertKey(newKey(account)), await store.keys.insertKey(newKey(account))];
        const until = new Date(Date.now() + 60_000).toISOString();
        await store.keys.rotateKey(b.id, { prefix: 'ngk_new', hash: 'f'.repeat(64), previousUntil: until });
        const now = new Date().toISOString();
        const found = await store.keys.findKeysByHash([a.hash, b.hash, 'e'.repeat(64)], now);
        assert.deepEqual([...found.keys()].sort(), [a.hash, b.hash].sort());
        assert.equal(found.get(b.hash)!.key.id, b.id);
        assert.equal(found.get(a.hash)!.account.id, account);
        assert.equal((await store.keys.findKeysByHash([b.hash], new Date(Date.now() + 120_000).toISOString())).size, 0, 'past its overlap');
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

      test('pages every key not revoked, of every account, in id order', async () => {
        const other = (await store.accounts.createAccount(newAccount())).id;
        const made: ApiKey[] = [];
        for (let i = 0; i < 5; i++) made.push(await store.keys.insertKey(newKey(i % 2 ? other : account)));
        await store.keys.revokeKey(made[2].id);
        const ids: string[][] = [];
        for (let after = ''; ;) {
          const page = await store.keys.pageKeys(after, 2);
          if (page.length === 0) break;
          ids.push(page.map((k) => k.id));
          after = page.at(-1)!.id;
        }
        const live = made.filter((_, i) => i !== 2).map((k) => k.id).sort();
        assert.deepEqual(ids, [live.slice(0, 2), live.slice(2, 4)]);
        assert.deepEqual((await store.keys.pageKeys('', 10)).find((k) => k.id === made[1].id), made[1]);
      });

      test('finds a key by its hash together with its account and plan', async () => {
        const key = await store.keys.insertKey(newKey(account));
        const ctx = await findKeyByHash(store.keys, key.hash);
        assert.deepEqual(ctx, { key, account: await store.accounts.getAccount(account), plan: await store.plans.getPlan('free') });
        assert.equal(await findKeyByHash(store.keys, '0'.repeat(64)), undefined);
      });

      test("the key lookup reflects the account's current plan and status", async () => {
        await store.plans.createPlan(bigPlan);
        const key = await store.keys.insertKey(newKey(account));
        await store.accounts.updateAccount(account, { planId: 'enterprise', status: 'suspended' });
        const ctx = (await findKeyByHash(store.keys, key.hash))!;
        assert.equal(ctx.plan.cuPerMonth, 10_000_000_000);
        assert.equal(ctx.account.status, 'suspended');
      });

      test('updates a key name and restrictions, and can clear its expiry', async () => {
        const key = await store.keys.insertKey(newKey(account, { expiresAt: '2030-01-01T00:00:00.000Z' }));
        const patch = { name: 'renamed', ipAllowlist: ['192.0.2.1'], originAllowlist: [], networkAllowlist: ['testnet'], methodAllowlist: ['eth_blockNumber'], expiresAt: null };
        const updated = await store.keys.updateKey(key.id, patch);
        assert.deepEqual(updated, { ...key, ...patch });
        assert.deepEqual((await findKeyByHash(store.keys, key.hash))!.key, updated);
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
        assert.equal((await findKeyByHash(store.keys, key.hash))!.key.revokedAt, revoked!.revokedAt);
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

    describe('retention', () => {
      const row = (accountId: string, keyId: string, minute = '2026-03-01T10:00'): UsageMinute => ({
        minute, accountId, keyId, network: 'mainnet', method: 'eth_call', code: 0, requests: 1, computeUnits: 26, latencyMsSum: 3, latency: [1, 0, 0, 0, 0, 0],
      });
      const all = () => store.usage.listUsageMinutes({ from: '2026-01-01T00:00', to: '2027-01-01T00:00' });
      const sum = (rows: UsageMinute[]) => rows.reduce((t, r) => ({ requests: t.requests + r.requests, computeUnits: t.computeUnits + r.computeUnits, latencyMsSum: t.latencyMsSum + r.latencyMsSum, l0: t.l0 + r.latency[0] }), { requests: 0, computeUnits: 0, latencyMsSum: 0, l0: 0 });

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
        await store.usage.addUsageMinutes([row(a, oldA.id), row(a, oldA.id, '2026-03-01T10:01'), row(b, oldB.id), row(a, live.id), row(a, recent.id)]);
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

      test("a key pruned later adds its usage to the account's (revoked) rows already there", async () => {
        await store.plans.createPlan(freePlan);
        const a = (await store.accounts.createAccount(newAccount())).id;
        const first = await store.keys.insertKey(newKey(a));
        const second = await store.keys.insertKey(newKey(a));
        await store.keys.revokeKey(first.id);
        await tick();
        await store.keys.revokeKey(second.id);
        await tick();
        const cutoff = new Date().toISOString();
        await store.usage.addUsageMinutes([row(a, first.id), row(a, second.id), row(a, second.id, '2026-03-01T10:01')]);
        assert.equal(await store.keys.pruneRevokedKeys(cutoff, 1), 1);
        assert.equal(await store.keys.pruneRevokedKeys(cutoff, 1), 1);
        assert.deepEqual((await all()).map((r) => `${r.minute} ${r.keyId} ${r.requests} ${r.computeUnits} ${r.latency[0]}`), [
          `2026-03-01T10:00 (revoked):${a} 2 52 2`, `2026-03-01T10:01 (revoked):${a} 1 26 1`,
        ]);
      });

      test('prunes running at once (every instance runs retention) fold each key once', async () => {
        await store.plans.createPlan(freePlan);
        const accounts = [(await store.accounts.createAccount(newAccount())).id, (await store.accounts.createAccount(newAccount())).id];
        const keys = [];
        for (let i = 0; i < 20; i++) keys.push(await store.keys.insertKey(newKey(accounts[i % 2])));
        for (const key of keys) await store.keys.revokeKey(key.id);
        await tick();
        const cutoff = new Date().toISOString();
        await store.usage.addUsageMinutes(keys.map((key) => row(key.accountId, key.id)));
        // On PostgreSQL each call takes a connection of its own: the prunes overlap as two instances' would.
        const pruned = await Promise.all(Array.from({ length: 6 }, () => store.keys.pruneRevokedKeys(cutoff, 4)));
        const rest = await store.keys.pruneRevokedKeys(cutoff, 100);
        assert.equal(pruned.reduce((x, y) => x + y, 0) + rest, 20, 'each key pruned once');
        assert.deepEqual((await all()).map((r) => `${r.keyId} ${r.requests}`).sort(), accounts.map((a) => `(revoked):${a} 10`).sort(), 'each call counted once');
      });
    });
  });
}
