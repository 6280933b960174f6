import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { BackoffOptions, LoginBackoffStore } from './login-backoff.ts';

/** The options every store is run with: 2 free failures, 1 s doubling up to 8 s, clean after a minute. */
export const CONTRACT_BACKOFF: BackoffOptions = { freeFailures: 2, maxBackoffMs: 8000, cleanAfterMs: 60_000, maxEntries: 1000 };

/**
 * The behaviour every LoginBackoffStore must have (STYLE principle 6), on a clock of the test's own (`now` is passed
 * in): run by login-backoff.test.ts (memory) and redis-login-backoff.test.ts. Emails and addresses are new per test.
 */
export function loginBackoffContract(name: string, store: () => LoginBackoffStore, options: { skip?: string } = {}): void {
  describe(`${name} login backoff`, { skip: options.skip }, () => {
    const t = 1_700_000_000_000;
    const email = () => `${randomUUID()}@example.com`;
    const address = () => `10.${randomUUID()}`;

    test('free failures, then 1 s, doubling up to the longest wait', async () => {
      const s = store();
      const [e, a] = [email(), address()];
      const waits = [];
      for (let i = 0; i < 6; i++) {
        await s.failed(e, a, t);
        waits.push(await s.waitSeconds(e, a, t));
      }
      assert.deepEqual(waits, [0, 1, 2, 4, 8, 8]);
      assert.equal(await s.waitSeconds(e, a, t + 8000), 0, 'the wait ends');
    });

    test('the email\'s streak holds back another address only once that address has failed too', async () => {
      const s = store();
      const [e, guesser, other] = [email(), address(), address()];
      for (let i = 0; i < 3; i++) await s.failed(e, guesser, t);
      assert.equal(await s.waitSeconds(e, other, t), 0, 'a clean address is never held back by someone else\'s guesses');
      await s.failed(email(), other, t);
      assert.equal(await s.waitSeconds(e, other, t), 2, 'an address that fails elsewhere is held back by the email\'s streak');
    });

    test('an address that logged in to the email is spared its streak, and its own streak ends', async () => {
      const s = store();
      const [e, owner, guesser] = [email(), address(), address()];
      await s.succeeded(e, owner);
      for (let i = 0; i < 3; i++) await s.failed(e, guesser, t);
      for (let i = 0; i < 3; i++) await s.failed(e, owner, t);
      assert.equal(await s.waitSeconds(e, owner, t), 2, 'its own three failures hold it back, not the email\'s six');
      await s.succeeded(e, owner);
      assert.equal(await s.waitSeconds(e, owner, t), 0, 'the right password ended its streak; the email\'s does not hold it');
      assert.equal(await s.waitSeconds(e, guesser, t), 8, 'the email\'s six failures hold the guesser back');
    });

    test('a streak older than the clean time starts again', async () => {
      const s = store();
      const [e, a] = [email(), address()];
      await s.failed(e, a, t);
      await s.failed(e, a, t);
      assert.equal(await s.waitSeconds(e, a, t), 1);
      const later = t + 60_000;
      assert.equal(await s.waitSeconds(e, a, later), 0);
      await s.failed(e, a, later);
      assert.equal(await s.waitSeconds(e, a, later), 0, 'one failure of a new streak is free again');
    });
  });
}
