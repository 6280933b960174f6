import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Account } from '../accounts/model.ts';
import { PasswordLogins } from './password-login.ts';

function fixture(opts: { ttlMs?: number; concurrency?: number; delayMs?: number } = {}) {
  const accounts = new Map<string, Account>();
  const t = '2026-01-01T00:00:00.000Z';
  accounts.set('op@x', { id: 'a1', name: 'Op', email: 'op@x', passwordHash: 'H1', status: 'active', role: 'operator', planId: 'free', createdAt: t, updatedAt: t });
  const calls: string[] = [];
  let running = 0;
  let peak = 0;
  const verify = async (password: string, stored: string | null) => {
    calls.push(password);
    peak = Math.max(peak, ++running);
    await new Promise((r) => setTimeout(r, opts.delayMs ?? 0));
    running--;
    return stored === `H${password.at(-1)}` && password.startsWith('pw');
  };
  const logins = new PasswordLogins({ getAccountByEmail: async (e) => accounts.get(e) }, { ttlMs: opts.ttlMs, concurrency: opts.concurrency, verify });
  return { logins, accounts, calls, peak: () => peak };
}

describe('PasswordLogins', () => {
  test('remembers a successful check: the second login does not run scrypt', async () => {
    const f = fixture();
    assert.equal((await f.logins.login('op@x', 'pw1'))?.id, 'a1');
    assert.equal((await f.logins.login('op@x', 'pw1'))?.id, 'a1');
    assert.equal(f.calls.length, 1);
  });

  test('never remembers a failure', async () => {
    const f = fixture();
    assert.equal(await f.logins.login('op@x', 'pw2'), undefined);
    assert.equal(await f.logins.login('op@x', 'pw2'), undefined);
    assert.equal(f.calls.length, 2);
  });

  test('any change to the account (updatedAt, password hash) checks again', async () => {
    const f = fixture();
    await f.logins.login('op@x', 'pw1');
    f.accounts.set('op@x', { ...f.accounts.get('op@x')!, name: 'Renamed', updatedAt: '2026-01-02T00:00:00.000Z' });
    assert.ok(await f.logins.login('op@x', 'pw1'));
    assert.equal(f.calls.length, 2);
    f.accounts.set('op@x', { ...f.accounts.get('op@x')!, passwordHash: 'H2', updatedAt: '2026-01-03T00:00:00.000Z' });
    assert.equal(await f.logins.login('op@x', 'pw1'), undefined);
    assert.ok(await f.logins.login('op@x', 'pw2'));
  });

  test('forgets a check after ttlMs', async () => {
    const f = fixture({ ttlMs: 20 });
    await f.logins.login('op@x', 'pw1');
    await new Promise((r) => setTimeout(r, 30));
    await f.logins.login('op@x', 'pw1');
    assert.equal(f.calls.length, 2);
  });

  test('an unknown email still runs a check (same time as a wrong password) and fails', async () => {
    const f = fixture();
    assert.equal(await f.logins.login('nobody@x', 'pw1'), undefined);
    assert.deepEqual(f.calls, ['pw1']);
  });

  test('runs at most `concurrency` checks at once, and all of them finish', async () => {
    const f = fixture({ concurrency: 2, delayMs: 10 });
    const results = await Promise.all(Array.from({ length: 7 }, (_, i) => f.logins.login('op@x', `wrong${i}`)));
    assert.deepEqual(results, Array(7).fill(undefined));
    assert.equal(f.calls.length, 7);
    assert.equal(f.peak(), 2);
  });
});
