import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { newKeyMaterial } from '../../auth/key-value.ts';
import { freePlan, newAccount, newKey, storePerTest, type StoreContract } from '../fixtures.contract.ts';
import type { JwtPublicKey } from './api-key.ts';
import { findKeyByHash } from './key-store.ts';

const JWK: JwtPublicKey = { id: 'signer-1', alg: 'EdDSA', jwk: { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' } };
const at = (ms: number) => new Date(ms).toISOString();

/** The keys' rules and rotation, part of the store contract (fixtures.contract.ts), run on SQLite and PostgreSQL. */
export function keyRulesContract(c: StoreContract): void {
  describe('key rules and rotation', () => {
    const store = storePerTest(c);
    let account: string;
    beforeEach(async () => {
      await store.plans.createPlan(freePlan);
      account = (await store.accounts.createAccount(newAccount())).id;
    });

    test('keeps and changes the rules hosted providers offer: denylist, contracts, user agents, logs range, JWT keys', async () => {
      const rules = {
        methodDenylist: ['eth_sendRawTransaction'], contractAllowlist: ['0x' + 'ab'.repeat(20)], userAgentAllowlist: ['my-app/'],
        logsMaxBlockRange: 500, jwtKeys: [JWK], jwtAudiences: ['nodegate'],
      };
      const key = await store.keys.insertKey(newKey(account, rules));
      assert.deepEqual({ ...key, ...rules }, key);
      assert.deepEqual((await findKeyByHash(store.keys, key.hash))!.key, key);
      const cleared = await store.keys.updateKey(key.id, { methodDenylist: [], logsMaxBlockRange: null, jwtKeys: [], jwtAudiences: [] });
      assert.deepEqual(cleared, { ...key, methodDenylist: [], logsMaxBlockRange: null, jwtKeys: [], jwtAudiences: [] });
    });

    test('a rotated key is found by its new value, and by its old one only until the overlap ends', async () => {
      const key = await store.keys.insertKey(newKey(account));
      const next = newKeyMaterial('x').key;
      const until = at(Date.now() + 60_000);
      const rotated = (await store.keys.rotateKey(key.id, { prefix: next.prefix, hash: next.hash, previousUntil: until }))!;
      assert.deepEqual([rotated.hash, rotated.prefix, rotated.previousHash, rotated.previousPrefix, rotated.previousUntil], [next.hash, next.prefix, key.hash, key.prefix, until]);
      assert.equal((await findKeyByHash(store.keys, next.hash))!.key.id, key.id);
      assert.equal((await findKeyByHash(store.keys, key.hash))!.key.id, key.id, 'the old value during the overlap');
      assert.equal(await findKeyByHash(store.keys, key.hash, at(Date.now() + 60_001)), undefined, 'not past it, even before it is forgotten');
      // Its hash leaves the store once the overlap is over; a key still in its overlap keeps it.
      assert.equal(await store.keys.forgetPreviousValues({ endedBy: at(Date.now()) }), 0);
      assert.equal(await store.keys.forgetPreviousValues({ endedBy: at(Date.now() + 60_000) }), 1);
      const after = (await store.keys.getKey(key.id))!;
      assert.deepEqual([after.previousHash, after.previousPrefix, after.previousUntil], [null, null, null]);
    });

    test('a rotation without overlap, or one over a running overlap, ends the older value at once', async () => {
      const key = await store.keys.insertKey(newKey(account));
      const second = newKeyMaterial('x').key;
      const third = newKeyMaterial('x').key;
      await store.keys.rotateKey(key.id, { ...second, previousUntil: at(Date.now() + 60_000) });
      await store.keys.rotateKey(key.id, { ...third, previousUntil: at(Date.now() + 60_000) });
      assert.equal(await findKeyByHash(store.keys, key.hash), undefined, 'the first value');
      assert.equal((await findKeyByHash(store.keys, second.hash))!.key.id, key.id);
      const fourth = newKeyMaterial('x').key;
      await store.keys.rotateKey(key.id, { ...fourth, previousUntil: null });
      assert.equal(await findKeyByHash(store.keys, third.hash), undefined);
      assert.equal((await store.keys.getKey(key.id))!.previousHash, null);
    });

    test('ends one key\'s overlap; never rotates a revoked key', async () => {
      const key = await store.keys.insertKey(newKey(account));
      const next = newKeyMaterial('x').key;
      await store.keys.rotateKey(key.id, { ...next, previousUntil: at(Date.now() + 60_000) });
      assert.equal(await store.keys.forgetPreviousValues({ id: key.id }), 1);
      assert.equal(await findKeyByHash(store.keys, key.hash), undefined);
      await store.keys.revokeKey(key.id);
      assert.equal(await store.keys.rotateKey(key.id, { ...newKeyMaterial('x').key, previousUntil: null }), undefined);
    });

    test('finds keys by the prefix shown, of one account or of all, and an old value\'s during its overlap', async () => {
      const other = (await store.accounts.createAccount(newAccount())).id;
      const mine = await store.keys.insertKey(newKey(account, { prefix: 'ngk_Ab12' }));
      const theirs = await store.keys.insertKey(newKey(other, { prefix: 'ngk_Ab13' }));
      assert.deepEqual((await store.keys.findKeysByPrefix('ngk_Ab12', undefined, 10)).map((k) => k.id), [mine.id]);
      // Both: made in the same millisecond they may come in either order (oldest first, then by id).
      assert.deepEqual((await store.keys.findKeysByPrefix('ngk_Ab1', undefined, 10)).map((k) => k.id).sort(), [mine.id, theirs.id].sort());
      assert.deepEqual((await store.keys.findKeysByPrefix('ngk_Ab1', account, 10)).map((k) => k.id), [mine.id]);
      assert.deepEqual(await store.keys.findKeysByPrefix('ngk_%', undefined, 10), [], 'a wildcard is a character like any other');
      await store.keys.rotateKey(mine.id, { prefix: 'ngk_Zz99', hash: newKeyMaterial('x').key.hash, previousUntil: at(Date.now() + 60_000) });
      assert.deepEqual((await store.keys.findKeysByPrefix('ngk_Ab12', account, 10)).map((k) => k.id), [mine.id]);
      assert.deepEqual((await store.keys.findKeysByPrefix('ngk_Zz99', account, 10)).map((k) => k.id), [mine.id]);
    });
  });
}
