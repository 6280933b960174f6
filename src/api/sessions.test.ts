import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, mock, test } from 'node:test';
import { sqliteStores } from '../store/open-store.ts';
import { freePlan, newAccount } from '../store/store.contract.ts';
import { Sessions } from './sessions.ts';

const dir = mkdtempSync(join(tmpdir(), 'ng-sessions-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('logins in the same millisecond still end the oldest sessions first, never a newer one', async () => {
  const store = sqliteStores(join(dir, 'sessions.db'));
  try {
    await store.plans.createPlan(freePlan);
    const account = await store.accounts.createAccount(newAccount());
    const sessions = new Sessions(store, 3_600_000, 20);
    // 25 logins in one millisecond (the clock held still): a tie on created_at used to end a random one.
    const values: string[] = [];
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    try {
      for (let i = 0; i < 25; i++) values.push((await sessions.create(account)).value);
    } finally {
      mock.timers.reset();
    }
    const ended: number[] = [];
    for (const [i, v] of values.entries()) if (!(await sessions.find(v))) ended.push(i);
    assert.deepEqual(ended, [0, 1, 2, 3, 4]);
  } finally {
    await store.close();
  }
});
