import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FilterState, FilterStore } from './filter-store.ts';

/**
 * The contract every filter store keeps (STYLE principle 6): run by memory-filter-store.test.ts and
 * redis-filter-store.test.ts. `open` gives a store of its own (a Redis one under a key prefix no other test uses)
 * on the test's clock; expiry is judged by that clock, so no test waits.
 */
export function filterStoreContract(name: string, open: (now: () => number) => Promise<FilterStore>, options: { skip?: string } = {}): void {
  describe(`filter store contract: ${name}`, { skip: options.skip }, () => {
    let t = 1_000_000;
    const clock = () => t;
    const filter = (id: string, keyId = 'k1', ttl = 1000, accountId = `a-${keyId}`): FilterState => ({
      id, keyId, accountId, network: 'mainnet', kind: 'blocks', cursor: { number: 1, hash: '0x01' }, origin: 1, recent: [], expiresAt: t + ttl,
    });

    it('keeps, finds, updates and removes a filter', async () => {
      const s = await open(clock);
      assert.equal(await s.add(filter('0xa'), 10), true);
      assert.equal((await s.get('0xa'))?.keyId, 'k1');
      const f = (await s.get('0xa'))!;
      assert.equal(await s.update({ ...f, cursor: { number: 5, hash: '0x05' } }), true);
      assert.equal((await s.get('0xa'))?.cursor.number, 5);
      assert.equal(await s.update(f), false, 'a copy read before that save is not saved over it');
      assert.equal(await s.remove('0xa'), true);
      assert.equal(await s.remove('0xa'), false);
      assert.equal(await s.get('0xa'), undefined);
      await s.close();
    });

    it('hands out copies: a change is kept only when it is saved with update', async () => {
      const s = await open(clock);
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
      const s = await open(clock);
      await s.add(filter('0xb'), 10);
      const f = (await s.get('0xb'))!;
      await s.remove('0xb');
      assert.equal(await s.update(f), false);
      assert.equal(await s.get('0xb'), undefined);
      await s.close();
    });

    it('refuses a filter past the per-key limit, counting only live filters of that key', async () => {
      const s = await open(clock);
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
      const s = await open(clock);
      assert.equal(await s.add(filter('0x11', 'k1', 1000, 'acct'), 2), true);
      assert.equal(await s.add(filter('0x12', 'k2', 1000, 'acct'), 2), true);
      assert.equal(await s.add(filter('0x13', 'k3', 1000, 'acct'), 2), false, 'a third key of the same account');
      assert.equal(await s.add(filter('0x14', 'k4', 1000, 'other'), 2), true);
      await s.remove('0x11');
      assert.equal(await s.add(filter('0x13', 'k3', 1000, 'acct'), 2), true, 'room again once one is gone');
      await s.close();
    });

    it('a filter is gone once its expiry passes', async () => {
      const s = await open(clock);
      await s.add(filter('0xc', 'k1', 100), 10);
      t += 99;
      const read = (await s.get('0xc'))!;
      assert.ok(read);
      t += 1;
      assert.equal(await s.get('0xc'), undefined);
      assert.equal(await s.update(read), false, 'met expired, it is gone: a copy read before does not bring it back');
      assert.equal(await s.remove('0xc'), false);
      await s.close();
    });

    it('of two polls read together, only the first saved: the other reads it again and then saves', async () => {
      const s = await open(clock);
      await s.add(filter('0xd'), 10);
      const [a, b] = [(await s.get('0xd'))!, (await s.get('0xd'))!];
      a.cursor = { number: 2, hash: '0x02' };
      b.cursor = { number: 2, hash: '0x02' };
      assert.equal(await s.update(a), true);
      assert.equal(await s.update(b), false, 'b reported what a did: not saved');
      const again = (await s.get('0xd'))!;
      assert.equal(again.cursor.number, 2);
      again.cursor = { number: 3, hash: '0x03' };
      assert.equal(await s.update(again), true);
      assert.equal((await s.get('0xd'))?.cursor.number, 3);
      await s.close();
    });

    it('a saved filter lives until its new expiry, and counts until then', async () => {
      const s = await open(clock);
      await s.add(filter('0xe', 'k9', 100), 1);
      t += 90;
      const f = (await s.get('0xe'))!;
      f.expiresAt = t + 100;
      assert.equal(await s.update(f), true);
      t += 90;
      assert.ok(await s.get('0xe'), 'polled in time: still there');
      assert.equal(await s.add(filter('0xf', 'k9', 100), 1), false, 'and still counted');
      t += 10;
      assert.equal(await s.get('0xe'), undefined);
      assert.equal(await s.add(filter('0xf', 'k9', 100), 1), true);
      await s.close();
    });

    it('numbers the transactions sent on each network, and hands out those after a number', async () => {
      const s = await open(clock);
      assert.deepEqual(await s.sentSince('mainnet'), { seq: 0, hashes: [] });
      for (const h of ['0x01', '0x02', '0x03']) await s.noteSent('mainnet', h);
      await s.noteSent('testnet', '0x09');
      assert.deepEqual(await s.sentSince('mainnet'), { seq: 3, hashes: [] });
      assert.deepEqual(await s.sentSince('mainnet', 1), { seq: 3, hashes: ['0x02', '0x03'] });
      assert.deepEqual(await s.sentSince('mainnet', 3), { seq: 3, hashes: [] });
      assert.deepEqual(await s.sentSince('testnet', 0), { seq: 1, hashes: ['0x09'] });
      assert.deepEqual(await s.sentSince('mainnet', 7), { seq: 3, hashes: ['0x01', '0x02', '0x03'] }, 'a sequence started again: all of it is new');
      await s.close();
    });
  });
}
