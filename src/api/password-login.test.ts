import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Account } from '../store/accounts/account.ts';
import { eventually } from '../../test/helpers/eventually.ts';
import { PasswordCheckRefused, PasswordLogins } from './password-login.ts';

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
  const logins = new PasswordLogins({ accounts: { getAccountByEmail: async (e) => accounts.get(e) } }, { ttlMs: opts.ttlMs, concurrency: opts.concurrency, verify });
  return { logins, accounts, calls, peak: () => peak };
}

describe('PasswordLogins', () => {
  test('remembers a successful check: the second login does not run scrypt', async () => {
    const f = fixture();
    assert.equal((await f.logins.login('op@x', 'pw1', '10.0.0.1'))?.id, 'a1');
    assert.equal((await f.logins.login('op@x', 'pw1', '10.0.0.1'))?.id, 'a1');
    assert.equal(f.calls.length, 1);
  });

  test('never remembers a failure', async () => {
    const f = fixture();
    assert.equal(await f.logins.login('op@x', 'pw2', '10.0.0.1'), undefined);
    assert.equal(await f.logins.login('op@x', 'pw2', '10.0.0.1'), undefined);
    assert.equal(f.calls.length, 2);
  });

  test('any change to the account (updatedAt, password hash) checks again', async () => {
    const f = fixture();
    await f.logins.login('op@x', 'pw1', '10.0.0.1');
    f.accounts.set('op@x', { ...f.accounts.get('op@x')!, name: 'Renamed', updatedAt: '2026-01-02T00:00:00.000Z' });
    assert.ok(await f.logins.login('op@x', 'pw1', '10.0.0.1'));
    assert.equal(f.calls.length, 2);
    f.accounts.set('op@x', { ...f.accounts.get('op@x')!, passwordHash: 'H2', updatedAt: '2026-01-03T00:00:00.000Z' });
    assert.equal(await f.logins.login('op@x', 'pw1', '10.0.0.1'), undefined);
    assert.ok(await f.logins.login('op@x', 'pw2', '10.0.0.1'));
  });

  test('forgets a check after ttlMs', async () => {
    const f = fixture({ ttlMs: 20 });
    await f.logins.login('op@x', 'pw1', '10.0.0.1');
    await new Promise((r) => setTimeout(r, 30));
    await f.logins.login('op@x', 'pw1', '10.0.0.1');
    assert.equal(f.calls.length, 2);
  });

  test('an unknown email still runs a check (same time as a wrong password) and fails', async () => {
    const f = fixture();
    assert.equal(await f.logins.login('nobody@x', 'pw1', '10.0.0.1'), undefined);
    assert.deepEqual(f.calls, ['pw1']);
  });

  test('runs at most `concurrency` checks at once, and all of them finish', async () => {
    const f = fixture({ concurrency: 2, delayMs: 10 });
    const results = await Promise.all(Array.from({ length: 7 }, (_, i) => f.logins.login('op@x', `wrong${i}`, `10.${i}.0.1`)));
    assert.deepEqual(results, Array(7).fill(undefined));
    assert.equal(f.calls.length, 7);
    assert.equal(f.peak(), 2);
  });
});

describe('PasswordLogins under attack', () => {
  test('at most maxWaiting checks wait for a slot; the rest are refused at once, unchecked', async () => {
    const f = fixture({ concurrency: 2, delayMs: 30 });
    const logins = new PasswordLogins({ accounts: { getAccountByEmail: async (e) => f.accounts.get(e) } }, { concurrency: 2, maxWaiting: 8, freeFailures: 1000, verify: async () => { await new Promise((r) => setTimeout(r, 30)); return false; } });
    const outcomes = await Promise.all(Array.from({ length: 150 }, (_, i) => logins.login(`guess${i}@x`, 'nope', `10.${i}.0.1`).then(() => 'checked', (e) => (e instanceof PasswordCheckRefused ? e.reason : 'error'))));
    assert.equal(outcomes.filter((o) => o === 'checked').length, 10, '2 running and 8 waiting');
    assert.equal(outcomes.filter((o) => o === 'busy').length, 140);
  });

  test('an email that failed 3 times in a row backs off, doubling; the right password after the wait clears it', async () => {
    let now = 1_000_000;
    const f = fixture();
    const logins = new PasswordLogins({ accounts: { getAccountByEmail: async (e) => f.accounts.get(e) } }, { verify: async (p, stored) => stored === `H${p.at(-1)}` && p.startsWith('pw'), now: () => now });
    for (let i = 0; i < 3; i++) assert.equal(await logins.login('op@x', 'wrong', '10.0.0.1'), undefined);
    await assert.rejects(logins.login('op@x', 'pw1', '10.0.0.1'), (e: any) => e instanceof PasswordCheckRefused && e.reason === 'backoff' && e.retryAfterSeconds === 1, 'even the right password waits');
    await assert.rejects(logins.login('OP@x', 'pw1', '10.0.0.1'), PasswordCheckRefused, 'whatever the case of the email');
    now += 1000;
    assert.equal(await logins.login('op@x', 'wrong', '10.0.0.1'), undefined);
    await assert.rejects(logins.login('op@x', 'pw1', '10.0.0.1'), (e: any) => e.retryAfterSeconds === 2, 'twice as long after the next failure');
    now += 2000;
    assert.equal((await logins.login('op@x', 'pw1', '10.0.0.1'))?.id, 'a1');
    assert.equal(await logins.login('op@x', 'wrong', '10.0.0.1'), undefined, 'a success starts the count again: one failure is free');
    assert.equal(await logins.login('nobody@x', 'wrong', '10.0.0.1'), undefined, 'unknown emails back off the same way (no enumeration)');
  });

  test('an address that has not failed gets the right password checked while another keeps the email backing off', async () => {
    let now = 1_000_000;
    const f = fixture();
    const logins = new PasswordLogins({ accounts: { getAccountByEmail: async (e) => f.accounts.get(e) } }, { verify: async (p, stored) => stored === `H${p.at(-1)}` && p.startsWith('pw'), now: () => now });
    for (let i = 0; i < 3; i++) await logins.login('op@x', 'wrong', '10.9.9.9');
    await assert.rejects(logins.login('op@x', 'pw1', '10.9.9.9'), (e: any) => e.reason === 'backoff', 'the failing address waits');
    assert.equal((await logins.login('op@x', 'pw1', '10.1.1.1'))?.id, 'a1', 'a clean address is checked');
    // Another failing address (it failed elsewhere) is held back by the email's streak; the owner's address is not.
    await logins.login('other@x', 'wrong', '10.7.7.7');
    await assert.rejects(logins.login('op@x', 'pw1', '10.7.7.7'), (e: any) => e.reason === 'backoff');
    await logins.login('other@x', 'wrong', '10.1.1.1');
    assert.equal((await logins.login('op@x', 'pw1', '10.1.1.1'))?.id, 'a1', 'an address that logged in to this email before');
  });

  test('addresses that failed: one check at a time per address, two per /24, the rest refused; identical credentials share one check', async () => {
    const logins = new PasswordLogins({ accounts: { getAccountByEmail: async () => undefined } }, { freeFailures: 1000, verify: async () => { await new Promise((r) => setTimeout(r, 20)); return false; } });
    const outcome = (email: string, ip: string, pw = 'nope') => logins.login(email, pw, ip).then(() => 'checked', (e) => e.reason);
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.1.1']) assert.equal(await outcome('z@x', ip), 'checked');
    const same = await Promise.all([outcome('a@x', '10.0.0.1'), outcome('b@x', '10.0.0.1'), outcome('c@x', '10.0.0.2'), outcome('d@x', '10.0.0.3'), outcome('e@x', '10.0.1.1')]);
    assert.deepEqual(same, ['checked', 'address', 'checked', 'address', 'checked']);
    const shared = await Promise.all([outcome('a@x', '10.0.0.1'), outcome('a@x', '10.0.0.1')]);
    assert.deepEqual(shared, ['checked', 'checked']);
  });

  test('clean addresses of one /24 logging in at once all get checked, waiting their turn (two at a time) instead of being refused', async () => {
    let running = 0;
    let peak = 0;
    const t = '2026-01-01T00:00:00.000Z';
    const account = (i: number): Account => ({ id: `a${i}`, name: 'M', email: `m${i}@x`, passwordHash: 'H', status: 'active', role: 'member', planId: 'free', createdAt: t, updatedAt: t });
    const logins = new PasswordLogins({ accounts: { getAccountByEmail: async (e) => account(Number(e.slice(1, -2))) } }, {
      concurrency: 8,
      verify: async () => { peak = Math.max(peak, ++running); await new Promise((r) => setTimeout(r, 30)); running--; return true; },
    });
    const out = await Promise.all(Array.from({ length: 6 }, (_, i) => logins.login(`m${i}@x`, 'pw', `10.0.5.${i + 1}`).then((a) => a?.id, (e) => e.reason)));
    assert.deepEqual(out, ['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
    assert.equal(peak, 2, 'the /24 still runs two checks at a time');
    const sameAddress = await Promise.all([logins.login('m7@x', 'pw', '10.0.6.1'), logins.login('m8@x', 'pw', '10.0.6.1')]);
    assert.deepEqual(sameAddress.map((a) => a?.id), ['a7', 'a8'], 'two people behind one address');
  });

  test('an address has a budget of failures; past it no check runs', async () => {
    let calls = 0;
    const logins = new PasswordLogins({ accounts: { getAccountByEmail: async () => undefined } }, { freeFailures: 1000, failureBurst: 4, failuresPerMinute: 6, verify: async () => { calls++; return false; } });
    const out: string[] = [];
    for (let i = 0; i < 10; i++) out.push(await logins.login(`g${i}@x`, 'nope', '10.0.0.1').then(() => 'checked', (e) => e.reason));
    assert.deepEqual(out, [...Array(4).fill('checked'), ...Array(6).fill('address')]);
    assert.equal(calls, 4);
    assert.equal(await logins.login('g@x', 'nope', '10.0.1.1'), undefined, 'another /24 is checked');
  });

  test('a password change checks the current password in the same bound and counts a wrong one', async () => {
    const f = fixture();
    const account = f.accounts.get('op@x')!;
    for (let i = 0; i < 3; i++) assert.equal(await f.logins.verifyCurrent(account, 'wrong', '10.0.0.1'), false);
    await assert.rejects(f.logins.verifyCurrent(account, 'pw1', '10.0.0.1'), (e: any) => e.reason === 'backoff');
    assert.equal(await f.logins.verifyCurrent(account, 'pw1', '10.0.0.2'), true);
  });

  test("a clean address's check waits ahead of those of addresses that failed", async () => {
    const order: string[] = [];
    const logins = new PasswordLogins({ accounts: { getAccountByEmail: async () => undefined } }, {
      concurrency: 1, freeFailures: 1000,
      verify: async (p) => { await new Promise((r) => setTimeout(r, 10)); order.push(p); return false; },
    });
    for (let i = 1; i <= 5; i++) await logins.login(`g${i}@x`, 'warm-up', `10.${i}.0.1`);
    order.length = 0;
    const guesses = Array.from({ length: 5 }, (_, i) => logins.login(`g${i}@x`, `guess${i}`, `10.${i + 1}.0.1`));
    const owner = logins.login('owner@x', 'owner', '10.9.0.1');
    await Promise.all([...guesses, owner]);
    assert.deepEqual(order.slice(0, 2), ['guess0', 'owner'], 'only the running check goes before');
  });

  test('addresses that failed never hold every slot: one is kept for clean addresses', async () => {
    let running = 0;
    let peak = 0;
    const started: string[] = [];
    const logins = new PasswordLogins({ accounts: { getAccountByEmail: async () => undefined } }, {
      concurrency: 2, freeFailures: 1000,
      verify: async (p) => { started.push(p); peak = Math.max(peak, ++running); await gate; running--; return false; },
    });
    let open = () => {};
    let gate: Promise<void> = Promise.resolve();
    for (let i = 1; i <= 4; i++) await logins.login(`g${i}@x`, 'warm-up', `10.${i}.0.1`);
    peak = 0;
    started.length = 0;
    gate = new Promise((r) => { open = r; });
    const guesses = Array.from({ length: 4 }, (_, i) => logins.login(`g${i}@x`, `guess${i}`, `10.${i + 1}.0.1`));
    await eventually(() => started.length === 1, 5000, 'the first guess starts');
    const owner = logins.login('owner@x', 'owner', '10.9.0.1');
    await eventually(() => started.includes('owner'), 5000, "the owner's check starts");
    assert.deepEqual(started, ['guess0', 'owner'], "the owner's check starts at once, in the kept slot");
    open();
    await Promise.all([...guesses, owner]);
    assert.equal(peak, 2);
    assert.equal(started.length, 5);
  });
});
