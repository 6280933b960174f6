import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { freePlan, newAccount, storePerTest, type StoreContract } from '../fixtures.contract.ts';
import type { FiredAlert } from './alert-store.ts';

/** The alerts part of the store contract (fixtures.contract.ts), run on SQLite and PostgreSQL. */
export function alertStoreContract(c: StoreContract): void {
  describe('alert store', () => {
    const store = storePerTest(c);

    describe('settings and fired alerts', () => {
      test('keeps alert settings per account: none, then written, then replaced; listed for the checker', async () => {
        await store.plans.createPlan(freePlan);
        const a = await store.accounts.createAccount(newAccount());
        const b = await store.accounts.createAccount(newAccount());
        assert.equal(await store.alerts.getAlertSettings(a.id), undefined);
        const first = { quotaPercents: [75, 90, 100], errorRate: { percent: 5, minutes: 15, minRequests: 20 }, email: true };
        await store.alerts.putAlertSettings(a.id, first, new Date().toISOString());
        assert.deepEqual(await store.alerts.getAlertSettings(a.id), first);
        const second = { quotaPercents: [50], errorRate: null, email: false };
        await store.alerts.putAlertSettings(a.id, second, new Date().toISOString());
        await store.alerts.putAlertSettings(b.id, first, new Date().toISOString());
        assert.deepEqual(await store.alerts.getAlertSettings(a.id), second);
        assert.deepEqual((await store.alerts.listAlertSettings()).sort((x, y) => x.accountId.localeCompare(y.accountId)),
          [{ accountId: a.id, settings: second }, { accountId: b.id, settings: first }].sort((x, y) => x.accountId.localeCompare(y.accountId)));
      });

      test('an alert is claimed once per account, kind, threshold and period, also by two instances at once; an open one re-arms', async () => {
        await store.plans.createPlan(freePlan);
        const a = await store.accounts.createAccount(newAccount());
        const other = await c.sameDatabase();
        try {
          const fired = (over: Partial<FiredAlert> = {}): FiredAlert => ({ accountId: a.id, kind: 'quota', threshold: 75, period: '2026-03', firedAt: '2026-03-20T10:00:00.000Z', value: 76.5, ...over });
          const claims = await Promise.all([store.alerts.claimAlert(fired()), other.alerts.claimAlert(fired()), store.alerts.claimAlert(fired()), other.alerts.claimAlert(fired())]);
          assert.equal(claims.filter(Boolean).length, 1, 'exactly one of four concurrent claims wins');
          assert.equal(await store.alerts.claimAlert(fired({ threshold: 90, value: 91 })), true, 'another threshold is another alert');
          assert.equal(await store.alerts.claimAlert(fired({ period: '2026-04', firedAt: '2026-04-02T10:00:00.000Z' })), true, 'a new month re-arms a quota alert');
          const open = fired({ kind: 'errorRate', threshold: 5, period: 'open', firedAt: '2026-03-20T11:00:00.000Z', value: 12.5 });
          assert.equal(await store.alerts.claimAlert(open), true);
          assert.equal(await other.alerts.claimAlert({ ...open, firedAt: '2026-03-20T11:01:00.000Z' }), false, 'still open: not again');
          assert.equal(await store.alerts.closeAlert(a.id, 'errorRate', 5), true);
          assert.equal(await other.alerts.closeAlert(a.id, 'errorRate', 5), false, 'closed once');
          assert.equal(await other.alerts.claimAlert({ ...open, firedAt: '2026-03-20T12:00:00.000Z' }), true, 're-armed: fires again');
          const recent = await store.alerts.listFiredAlerts(a.id, 10);
          assert.deepEqual(recent.map((r) => [r.kind, r.threshold, r.period, r.firedAt, r.value]), [
            ['quota', 75, '2026-04', '2026-04-02T10:00:00.000Z', 76.5],
            ['errorRate', 5, 'open', '2026-03-20T12:00:00.000Z', 12.5],
            ['errorRate', 5, '2026-03-20T11:00:00.000Z', '2026-03-20T11:00:00.000Z', 12.5],
            ['quota', 75, '2026-03', '2026-03-20T10:00:00.000Z', 76.5],
            ['quota', 90, '2026-03', '2026-03-20T10:00:00.000Z', 91],
          ]);
          assert.equal((await store.alerts.listFiredAlerts(a.id, 2)).length, 2);
        } finally {
          await other.close();
        }
      });
    });
  });
}
