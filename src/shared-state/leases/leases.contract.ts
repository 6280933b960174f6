import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type { Leases } from './leases.ts';

/**
 * The behaviour every Leases must have (STYLE principle 6): run by memory-leases.test.ts, redis-leases.test.ts and
 * remote-leases.test.ts. `open` gives one more process's leases, sharing with the others it gave. Each test names
 * leases no other test names.
 */
export function leasesContract(name: string, open: () => Promise<Leases>, options: { skip?: string } = {}): void {
  describe(`${name} leases`, { skip: options.skip }, () => {
    const opened: Leases[] = [];
    after(() => Promise.all(opened.map((l) => l.close())));
    const process = async () => {
      const l = await open();
      opened.push(l);
      return l;
    };
    const lease = () => `contract:${randomUUID()}`;

    test('one process holds a lease while it lasts; another takes it once it lapses', async () => {
      const [a, b] = [await process(), await process()];
      const name = lease();
      assert.equal(await a.take(name, 300), true);
      assert.equal(await b.take(name, 300), false, 'held by the other');
      assert.equal(await a.take(name, 300), true, 'the holder keeps it');
      await sleep(400);
      assert.equal(await b.take(name, 300), true, 'lapsed: taken');
      assert.equal(await a.take(name, 300), false);
    });

    test('keeping a lease starts its time again', async () => {
      const [a, b] = [await process(), await process()];
      const name = lease();
      assert.equal(await a.take(name, 400), true);
      await sleep(250);
      assert.equal(await a.take(name, 400), true);
      await sleep(250);
      assert.equal(await b.take(name, 400), false, '500 ms after it was first taken, 250 ms after it was kept: still held');
    });

    test('leases of different names are apart', async () => {
      const [a, b] = [await process(), await process()];
      const [x, y] = [lease(), lease()];
      assert.equal(await a.take(x, 5000), true);
      assert.equal(await b.take(y, 5000), true);
      assert.equal(await b.take(x, 5000), false);
      assert.equal(await a.take(y, 5000), false);
    });

    test('of processes asking at once, one takes it', async () => {
      const all = await Promise.all([1, 2, 3, 4].map(() => process()));
      const name = lease();
      const taken = await Promise.all(all.map((l) => l.take(name, 5000)));
      assert.equal(taken.filter(Boolean).length, 1);
    });
  });
}
