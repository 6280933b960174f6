import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FilterState, FilterStore } from './filter-store.ts';
import { MemoryFilterStore } from './memory-filter-store.ts';

/** The contract every filter store keeps; a shared (Redis) store runs the same suite when it arrives. */
function filterStoreContract(name: string, open: (now: () => number) => FilterStore): void {
  describe(`filter store contract: ${name}`, () => {
    let t = 1_000_000;
    const clock = () => t;
    const filter = (id: string, keyId = 'k1', ttl = 1000, accountId = `a-${keyId}`): FilterState => ({
      id, keyId, accountId, network: 'mainnet', kind: 'blocks', cursor: { number: 1, hash: '0x01' }, origin: 1, recent: [], expiresAt: t + ttl,
    });

    it('keeps, finds, updates and removes a filter', async () => {
      const s = open(clock);
      assert.equal(await s.add(filter('0xa'), 10), true);
      assert.equal((await s.get('0xa'))?.keyId, 'k1');
      const f = (await s.get('0xa'))!;
      await s.update({ ...f, cursor: { number: 5, hash: '0x05' } });
      assert.equal((await s.get('0xa'))?.cursor.number, 5);
      assert.equal(await s.remove('0xa'), true);
      assert.equal(await s.remove('0xa'), false);
      assert.equal(await s.get('0xa'), undefined);
      await s.close();
    });

    it('hands out copies: a change is kept only when it is saved with update', async () => {
      const s = open(clock);
      const added = filter('0xc');
      await s.add(added, 10);
      added.cursor.number = 99; // the caller's object is not the stored one
      const f = (await s.get('0xc'))!;
      f.cursor.number = 7;
      f.recent.push({ number: 7, hash: '0x07', logs: [{ logIndex: '0x0' }] });
      assert.equal((await s.get('0xc'))?.cursor.number, 1, 'a poll that failed before update changed nothing');
      assert.deepEqual((await s.get('0xc'))?.recent, []);
      await s.update(f);
      f.recent[0].logs!.push({ logIndex: '0x1' });
      assert.deepEqual((await s.get('0xc'))?.recent, [{ number: 7, hash: '0x07', logs: [{ logIndex: '0x0' }] }]);
      await s.close();
    });

    it('a filter removed while it was polled stays removed', async () => {
      const s = open(clock);
      await s.add(filter('0xb'), 10);
      const f = (await s.get('0xb'))!;
      await s.remove('0xb');
      await s.update(f);
      assert.equal(await s.get('0xb'), undefined);
      await s.close();
    });

    it('refuses a filter past the per-key limit, counting only live filters of that key', async () => {
      const s = open(clock);
      assert.equal(await s.add(filter('0x1', 'k1'), 2), true);
      assert.equal(await s.add(filter('0x2', 'k1', 10), 2), true);
      assert.equal(await s.add(filter('0x3', 'k1'), 2), false);
      assert.equal(await s.add(filter('0x4', 'k2'), 2), true, 'another key has its own count');
      assert.equal(await s.add(filter('0x5', 'k3'), 0), false, 'a plan of 0 filters allows none');
      t += 20; // 0x2 has expired
      assert.equal(await s.add(filter('0x3', 'k1'), 2), true);
      await s.close();
    });

    it("refuses a filter past the limit of its account, whichever of the account's keys asks", async () => {
      const s = open(clock);
      assert.equal(await s.add(filter('0x11', 'k1', 1000, 'acct'), 2), true);
      assert.equal(await s.add(filter('0x12', 'k2', 1000, 'acct'), 2), true);
      assert.equal(await s.add(filter('0x13', 'k3', 1000, 'acct'), 2), false, 'a third key of the same account');
      assert.equal(await s.add(filter('0x14', 'k4', 1000, 'other'), 2), true);
      await s.remove('0x11');
      assert.equal(await s.add(filter('0x13', 'k3', 1000, 'acct'), 2), true, 'room again once one is gone');
      await s.close();
    });

    it('a filter is gone once its expiry passes', async () => {
      const s = open(clock);
      await s.add(filter('0xc', 'k1', 100), 10);
      t += 99;
      assert.ok(await s.get('0xc'));
      t += 1;
      assert.equal(await s.get('0xc'), undefined);
      assert.equal(await s.remove('0xc'), false);
      await s.close();
    });
  });
}

filterStoreContract('memory', (now) => new MemoryFilterStore(now));
