import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type { BudgetShape, EventBudget } from './event-budget.ts';

/**
 * The behaviour every EventBudget must have (STYLE principle 6): run by memory-event-budget.test.ts and
 * shared-event-budget.test.ts. Each test has subjects of its own; slow rates where no refill may be seen.
 */
export function eventBudgetContract(name: string, make: (shape: BudgetShape) => EventBudget & { close(): Promise<void> }, options: { skip?: string; closeAll?: () => Promise<void> } = {}): void {
  describe(`${name} event budget`, { skip: options.skip }, () => {
    const made: { close(): Promise<void> }[] = [];
    after(async () => {
      await Promise.all(made.map((b) => b.close()));
      await options.closeAll?.();
    });
    const budget = (shape: BudgetShape) => {
      const b = make(shape);
      made.push(b);
      return b;
    };
    const subject = () => `10.${randomUUID()}`;

    test('admits the burst, then answers how long to wait for the next event, and says the subject is exhausted', async () => {
      const b = budget({ perSecond: 0.1, burst: 3 });
      const s = subject();
      assert.equal(await b.exhausted(s), false);
      const spent = [];
      for (let i = 0; i < 5; i++) spent.push(await b.spend(s));
      assert.deepEqual(spent, [undefined, undefined, undefined, 10, 10], 'one event per 10 s once the burst is spent');
      assert.equal(await b.exhausted(s), true);
    });

    test('keeps subjects apart', async () => {
      const b = budget({ perSecond: 0.1, burst: 2 });
      const [x, y] = [subject(), subject()];
      await b.spend(x);
      await b.spend(x);
      assert.equal(await b.exhausted(x), true);
      assert.equal(await b.exhausted(y), false);
      assert.equal(await b.spend(y), undefined);
    });

    test('asking whether a subject is exhausted spends nothing', async () => {
      const b = budget({ perSecond: 0.1, burst: 2 });
      const s = subject();
      for (let i = 0; i < 10; i++) assert.equal(await b.exhausted(s), false);
      assert.equal(await b.spend(s), undefined);
      assert.equal(await b.spend(s), undefined);
      assert.equal(await b.exhausted(s), true);
    });

    test('refills at its rate: an event is admitted again once one was earned', async () => {
      // 5 a second: the second spend is refused unless 200 ms pass between two calls (at 50 a second, 20 ms of a
      // loaded machine's Redis round trip admitted it: this failed under npm run test:unit on 2 busy cores).
      const b = budget({ perSecond: 5, burst: 1 });
      const s = subject();
      assert.equal(await b.spend(s), undefined);
      assert.equal(await b.spend(s), 1, 'whole seconds, rounded up');
      await sleep(250); // earns 1.25 events at 5/s; holds 1
      assert.equal(await b.spend(s), undefined);
    });

    test('events at once never get more than the burst', async () => {
      const b = budget({ perSecond: 0.1, burst: 10 });
      const s = subject();
      const all = await Promise.all(Array.from({ length: 40 }, () => b.spend(s)));
      assert.equal(all.filter((r) => r === undefined).length, 10);
    });
  });
}
