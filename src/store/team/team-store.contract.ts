import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { conflict, freePlan, isIso, newAccount, newKey, tick, storePerTest, type StoreContract } from '../fixtures.contract.ts';
import type { NewMember } from './member-store.ts';
import type { AccountToken } from './token-store.ts';
import { findKeyByHash } from '../keys/key-store.ts';

/** The team part of the store contract (fixtures.contract.ts), run on SQLite and PostgreSQL. */
export function teamStoreContract(c: StoreContract): void {
  describe('team store', () => {
    const store = storePerTest(c);

    describe('members and tokens', () => {
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
        assert.equal((await findKeyByHash(store.keys, made.hash))?.key.createdBy, m.id);
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
    });

  });
}
