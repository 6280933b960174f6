import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type { SharedAnswers } from './shared-answers.ts';

/**
 * The behaviour every SharedAnswers must have (STYLE principle 6): run by memory-answers.test.ts and
 * redis-answers.test.ts. `store(maxBytes)` makes a store of its own, and gives its processes: each call one more
 * process sharing it. Each test names keys no other test names.
 */
export function answersContract(name: string, store: (maxBytes: number) => () => Promise<SharedAnswers>, options: { skip?: string } = {}): void {
  describe(`${name} shared answers`, { skip: options.skip }, () => {
    const opened: SharedAnswers[] = [];
    after(() => Promise.all(opened.map((a) => a.close())));
    const processesOf = (maxBytes = 1 << 20) => {
      const open = store(maxBytes);
      return async () => {
        const a = await open();
        opened.push(a);
        return a;
      };
    };
    const key = (network = 'main') => `${network}\u0000eth_getBlockByHash\u0000["${randomUUID()}"]`;

    test('an answer one process keeps is found by another, with the account that filled it', async () => {
      const process = processesOf();
      const [a, b] = [await process(), await process()];
      const k = key();
      assert.deepEqual(await a.find(k, 1000), { lease: 'taken' });
      await a.keep(k, { raw: '{"number":"0x1"}', filledBy: 'acct-1' }, 60_000);
      assert.deepEqual(await b.find(k, 1000), { kept: { raw: '{"number":"0x1"}', filledBy: 'acct-1' } });
    });

    test('of processes missing one key at once, one takes the lease; the others hear it is held', async () => {
      const process = processesOf();
      const all = await Promise.all([1, 2, 3].map(() => process()));
      const k = key();
      const found = await Promise.all(all.map((a) => a.find(k, 5000)));
      assert.deepEqual(found.map((f) => ('lease' in f ? f.lease : 'kept')).sort(), ['held', 'held', 'taken']);
    });

    test('a waiter gets the answer as soon as the holder of the lease keeps it', async () => {
      const process = processesOf();
      const [a, b] = [await process(), await process()];
      const k = key();
      await a.find(k, 5000);
      assert.deepEqual(await b.find(k, 5000), { lease: 'held' });
      const waiting = b.awaitKept(k, 60_000);
      await a.keep(k, { raw: '"0x2"', filledBy: 'acct-2' }, 60_000);
      assert.deepEqual(await waiting, { raw: '"0x2"', filledBy: 'acct-2' });
    });

    test('a waiter is let go when the holder releases the lease, and the next lookup takes it', async () => {
      const process = processesOf();
      const [a, b] = [await process(), await process()];
      const k = key();
      await a.find(k, 60_000);
      const waiting = b.awaitKept(k, 60_000);
      await a.release(k);
      assert.equal(await waiting, undefined);
      assert.deepEqual(await b.find(k, 60_000), { lease: 'taken' });
    });

    test('a waiter gives up after its wait when nothing is kept', async () => {
      const process = processesOf();
      const [a, b] = [await process(), await process()];
      const k = key();
      await a.find(k, 60_000);
      assert.equal(await b.awaitKept(k, 50), undefined);
    });

    test('an answer is gone once its time to live has passed', async () => {
      const process = processesOf();
      const [a, b] = [await process(), await process()];
      const k = key();
      await a.keep(k, { raw: '"0x3"', filledBy: 'acct' }, 150);
      await sleep(300);
      assert.deepEqual(await b.find(k, 1000), { lease: 'taken' });
    });

    test('past the byte budget the answers kept first go, and the newest stays', async () => {
      const process = processesOf(4000);
      const a = await process();
      const keys = Array.from({ length: 10 }, () => key());
      for (const k of keys) await a.keep(k, { raw: `"${'f'.repeat(900)}"`, filledBy: 'acct' }, 60_000);
      const found = await Promise.all(keys.map((k) => a.find(k, 1000)));
      const kept = found.filter((f) => 'kept' in f).length;
      assert.ok(kept >= 1 && kept <= 4, `${kept} of 10 answers of ~1 kB kept in 4 kB`);
      assert.ok('kept' in found[9], 'the newest is kept');
      assert.ok(!('kept' in found[0]), 'the first is gone');
    });

    test("dropping a network's answers leaves the other networks' answers", async () => {
      const process = processesOf();
      const [a, b] = [await process(), await process()];
      const [mine, other] = [key('dropped'), key('kept')];
      await a.keep(mine, { raw: '"0x4"', filledBy: 'acct' }, 60_000);
      await a.keep(other, { raw: '"0x5"', filledBy: 'acct' }, 60_000);
      await b.drop('dropped\u0000');
      assert.deepEqual(await a.find(mine, 1000), { lease: 'taken' });
      assert.ok('kept' in (await a.find(other, 1000)));
    });
  });
}
