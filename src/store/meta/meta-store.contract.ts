import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { storePerTest, type StoreContract } from '../fixtures.contract.ts';

/** The meta part of the store contract (fixtures.contract.ts), run on SQLite and PostgreSQL. */
export function metaStoreContract(c: StoreContract): void {
  describe('meta store', () => {
    const store = storePerTest(c);

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
