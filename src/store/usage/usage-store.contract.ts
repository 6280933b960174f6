import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { freePlan, newAccount, storePerTest, type StoreContract } from '../fixtures.contract.ts';
import { EVERYONE, type UsageMinute, type UsageQuery } from './usage-store.ts';

/** The usage part of the store contract (fixtures.contract.ts), run on SQLite and PostgreSQL. */
export function usageStoreContract(c: StoreContract): void {
  describe('usage store', () => {
    const store = storePerTest(c);

    describe('usage', () => {
      let a: string;
      let b: string;
      beforeEach(async () => {
        await store.plans.createPlan(freePlan);
        a = (await store.accounts.createAccount(newAccount())).id;
        b = (await store.accounts.createAccount(newAccount())).id;
      });

      test('adds up the compute units of several flushes, per account', async () => {
        await store.usage.addUsage('2026-03', [a, b], [120, 7]);
        await store.usage.addUsage('2026-03', [a], [30]);
        await store.usage.addUsage('2026-03', [], []);
        assert.equal(await store.usage.getUsage(a, '2026-03'), 150);
        assert.equal(await store.usage.getUsage(b, '2026-03'), 7);
      });

      test('keeps each month apart, so a new month starts from zero', async () => {
        await store.usage.addUsage('2026-03', [a], [500]);
        await store.usage.addUsage('2026-04', [a], [1]);
        assert.equal(await store.usage.getUsage(a, '2026-03'), 500);
        assert.equal(await store.usage.getUsage(a, '2026-04'), 1);
        assert.equal(await store.usage.getUsage(a, '2026-05'), 0);
      });

      test('answers the totals it leaves, what other writers added in them', async () => {
        await store.usage.addUsage('2026-03', [a], [120]);
        assert.deepEqual(await store.usage.addUsage('2026-03', [b, 'no-such-account', a], [7, 3, 30]), [7, undefined, 150], 'in the order asked; none for an account that is gone');
      });

      test('a batch sent again under its id counts once (a write that timed out for its sender, then retried)', async () => {
        assert.deepEqual(await store.usage.addUsage('2026-03', [a, b], [40, 2], 'batch-1'), [40, 2]);
        assert.deepEqual(await store.usage.addUsage('2026-03', [a, b], [40, 2], 'batch-1'), [undefined, undefined], 'nothing written, no total');
        await store.usage.addUsage('2026-03', [a], [5], 'batch-2');
        assert.equal(await store.usage.getUsage(a, '2026-03'), 45);
        assert.equal(await store.usage.getUsage(b, '2026-03'), 2);
      });

      test('reads many accounts at once: each its own month, none for an account without usage, past a chunk', async () => {
        await store.usage.addUsage('2026-03', [a, b], [11, 22]);
        await store.usage.addUsage('2026-04', [a], [5]);
        // 2,500 ids: the read is split, and the accounts asked last are still found.
        const ids = [...Array.from({ length: 2500 }, (_, i) => `nobody-${i}`), b, a];
        assert.deepEqual([...(await store.usage.getUsages(ids, '2026-03'))].sort(), [[a, 11], [b, 22]].sort());
        assert.deepEqual([...(await store.usage.getUsages([a, b], '2026-04'))], [[a, 5]]);
        assert.equal((await store.usage.getUsages([], '2026-03')).size, 0);
      });

      test('answers 0 for an account with no usage or no account at all', async () => {
        assert.equal(await store.usage.getUsage(a, '2026-03'), 0);
        assert.equal(await store.usage.getUsage('nope', '2026-03'), 0);
      });

      test('skips accounts that are gone without losing the rest of the batch', async () => {
        await store.usage.addUsage('2026-03', ['gone', a], [10, 20]);
        assert.equal(await store.usage.getUsage(a, '2026-03'), 20);
        assert.equal(await store.usage.getUsage('gone', '2026-03'), 0);
      });

      test('keeps totals beyond 32 bits exactly, as numbers', async () => {
        await store.usage.addUsage('2026-03', [a], [3_000_000_000]);
        await store.usage.addUsage('2026-03', [a], [3_000_000_001]);
        const used = await store.usage.getUsage(a, '2026-03');
        assert.equal(typeof used, 'number');
        assert.equal(used, 6_000_000_001);
      });

      test('refuses a malformed month, fractional or negative units, or an account named twice, before writing anything', async () => {
        await assert.rejects(store.usage.addUsage('2026-3', [a], [1]), TypeError);
        await assert.rejects(store.usage.addUsage('2026-13', [a], [1]), TypeError);
        await assert.rejects(store.usage.addUsage('2026-03', [a, b], [1, 1.5]), TypeError);
        await assert.rejects(store.usage.addUsage('2026-03', [a, b], [1, -1]), TypeError);
        await assert.rejects(store.usage.addUsage('2026-03', [a, b, a], [1, 1, 1]), TypeError);
        await assert.rejects(store.usage.addUsage('2026-03', [a, b], [1]), TypeError);
        assert.equal(await store.usage.getUsage(a, '2026-03'), 0);
      });

      test('counts every unit when two instances flush overlapping batches at the same time', async () => {
        const other = await c.sameDatabase();
        try {
          const accounts = [a, b];
          for (let i = 0; i < 4; i++) accounts.push((await store.accounts.createAccount(newAccount())).id);
          // Each flush names the accounts in its own order: the store must not deadlock on shared rows.
          const named = (i: number) => accounts.map((_, j) => accounts[(i + j) % accounts.length]);
          await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? other : store).usage.addUsage('2026-03', named(i), accounts.map((_, j) => j + 1))));
          const perFlush = accounts.length * (accounts.length + 1) / 2;
          const totals = await Promise.all(accounts.map((id) => other.usage.getUsage(id, '2026-03')));
          assert.equal(totals.reduce((x, y) => x + y, 0), 20 * perFlush);
        } finally {
          await other.close();
        }
      });
    });

    describe('usage minutes', () => {
      const row = (over: Partial<UsageMinute> = {}): UsageMinute => ({
        minute: '2026-03-01T10:00', accountId: 'acc-1', keyId: 'key-1', network: 'mainnet', method: 'eth_call', code: 0,
        requests: 2, computeUnits: 52, latencyMsSum: 9, latency: [1, 1, 0, 0, 0, 0], ...over,
      });

      test('adds flushes of the same minute, key, network, method and outcome together; keeps the others apart', async () => {
        await store.usage.addUsageMinutes([row(), row({ code: -32602, computeUnits: 0 }), row({ minute: '2026-03-01T10:01' })]);
        await store.usage.addUsageMinutes([row({ requests: 3, computeUnits: 78, latencyMsSum: 1000, latency: [0, 0, 0, 1, 2, 0] })]);
        await store.usage.addUsageMinutes([]);
        const rows = await store.usage.listUsageMinutes({ from: '2026-03-01T10:00', to: '2026-03-01T10:01' });
        assert.deepEqual(rows, [
          row({ code: -32602, computeUnits: 0 }),
          row({ requests: 5, computeUnits: 130, latencyMsSum: 1009, latency: [1, 1, 0, 1, 2, 0] }),
        ]);
        assert.equal((await store.usage.listUsageMinutes({ from: '2026-03-01T00:00', to: '2026-03-02T00:00', keyId: 'key-1', network: 'mainnet' })).length, 3);
        assert.equal((await store.usage.listUsageMinutes({ from: '2026-03-01T00:00', to: '2026-03-02T00:00', accountId: 'other' })).length, 0);
        await store.usage.pruneUsageMinutes('2026-03-01T10:01');
        assert.deepEqual((await store.usage.listUsageMinutes({ from: '2026-01-01T00:00', to: '2027-01-01T00:00' })).map((r) => r.minute), ['2026-03-01T10:01']);
      });

      test('keeps each flush at the hour and day grains, and everyone\'s calls added up, at every grain', async () => {
        await store.usage.addUsageMinutes([
          row(), row({ minute: '2026-03-01T10:59' }), row({ minute: '2026-03-01T11:00' }), row({ minute: '2026-03-02T00:00' }),
          row({ accountId: 'acc-2', keyId: 'key-2' }), row({ accountId: 'acc-2', keyId: 'key-2', code: -32005, computeUnits: 0 }),
        ], 'grains-1');
        await store.usage.addUsageMinutes([row()], 'grains-1');
        const day = { from: '2026-03-01T00:00', to: '2026-03-03T00:00' };
        const cells = (rows: UsageMinute[]) => rows.map((r) => [r.minute, r.accountId, r.keyId, r.code, r.requests, r.computeUnits]);
        assert.deepEqual(cells(await store.usage.listUsageMinutes({ ...day, grain: 'hour', accountId: 'acc-1' })), [
          ['2026-03-01T10:00', 'acc-1', 'key-1', 0, 4, 104], ['2026-03-01T11:00', 'acc-1', 'key-1', 0, 2, 52], ['2026-03-02T00:00', 'acc-1', 'key-1', 0, 2, 52],
        ]);
        assert.deepEqual(cells(await store.usage.listUsageMinutes({ ...day, grain: 'day', accountId: 'acc-1' })), [
          ['2026-03-01T00:00', 'acc-1', 'key-1', 0, 6, 156], ['2026-03-02T00:00', 'acc-1', 'key-1', 0, 2, 52],
        ]);
        // Everyone's rows: both accounts' calls per bucket, network, method and outcome; never in a read of all accounts.
        assert.deepEqual(cells(await store.usage.listUsageMinutes({ ...day, grain: 'day', accountId: EVERYONE })), [
          ['2026-03-01T00:00', EVERYONE, EVERYONE, -32005, 2, 0], ['2026-03-01T00:00', EVERYONE, EVERYONE, 0, 8, 208], ['2026-03-02T00:00', EVERYONE, EVERYONE, 0, 2, 52],
        ]);
        assert.deepEqual(cells(await store.usage.listUsageMinutes({ from: '2026-03-01T10:00', to: '2026-03-01T10:01', accountId: EVERYONE })), [
          ['2026-03-01T10:00', EVERYONE, EVERYONE, -32005, 2, 0], ['2026-03-01T10:00', EVERYONE, EVERYONE, 0, 4, 104],
        ]);
        assert.equal((await store.usage.listUsageMinutes({ ...day, grain: 'hour' })).length, 5, 'all accounts: their own rows alone');
        assert.deepEqual(await store.usage.sumUsageMinutes({ ...day, grain: 'day' }), { requests: 12, errors: 2, computeUnits: 260 });
        const top = await store.usage.topAccounts({ ...day, grain: 'day' }, 10);
        assert.deepEqual(top.map((a) => [a.accountId, a.requests, a.errors, a.computeUnits, a.latency[0]]), [['acc-1', 8, 0, 208, 4], ['acc-2', 4, 2, 52, 2]]);
        assert.deepEqual((await store.usage.topAccounts({ ...day, grain: 'hour', status: 'error' }, 1)).map((a) => a.accountId), ['acc-2']);
        assert.equal((await store.usage.topAccounts({ ...day, grain: 'day' }, 1)).length, 1);
        await store.usage.pruneUsageMinutes('2026-03-02T00:00');
        assert.deepEqual((await store.usage.listUsageMinutes({ ...day, grain: 'day', accountId: 'acc-1' })).map((r) => r.minute), ['2026-03-02T00:00']);
        assert.deepEqual((await store.usage.listUsageMinutes({ ...day, grain: 'hour', accountId: EVERYONE })).map((r) => r.minute), ['2026-03-02T00:00']);
      });

      test('adds up the rows of a query by bucket, method, key, network, outcome and account, as the rows read add up', async () => {
        await store.usage.addUsageMinutes([
          row(), row({ minute: '2026-03-01T10:01', method: 'eth_chainId', computeUnits: 0 }), row({ keyId: 'key-2', network: 'sepolia' }),
          row({ code: -32005, computeUnits: 0, latency: [2, 0, 0, 0, 0, 0] }), row({ accountId: 'acc-2', keyId: 'key-9', latencyMsSum: 700, latency: [0, 0, 0, 2, 0, 0] }),
        ]);
        const range = { from: '2026-03-01T10:00', to: '2026-03-01T11:00' };
        for (const q of [{ ...range, accountId: 'acc-1' }, { ...range, accountId: 'acc-1', status: 'error' as const }, { ...range }, { ...range, accountId: EVERYONE }, { ...range, grain: 'hour' as const, network: 'mainnet' }]) {
          const rows = await store.usage.listUsageMinutes(q);
          const expected = new Map<string, number[]>();
          const fold = (by: string, value: string, r: UsageMinute) => {
            const t = expected.get(`${by}=${value}`) ?? [0, 0, 0, 0, 0];
            expected.set(`${by}=${value}`, [t[0] + r.requests, t[1] + r.computeUnits, t[2] + (r.code === 0 ? 0 : r.requests), t[3] + r.latencyMsSum, t[4] + r.latency[0]]);
          };
          for (const r of rows) {
            for (const [by, value] of [['minute', r.minute], ['method', r.method], ['key', r.keyId], ['network', r.network], ['code', String(r.code)], ['account', r.accountId]]) fold(by, value, r);
          }
          const groups = await store.usage.summarizeUsage(q);
          const got = new Map(groups.map((g) => [`${g.by}=${g.value}`, [g.requests, g.computeUnits, g.errors, g.latencyMsSum, g.latency[0]]]));
          assert.ok(rows.length > 0, `rows for ${JSON.stringify(q)}`);
          assert.deepEqual(got, expected, `groups of ${JSON.stringify(q)}`);
        }
      });

      test('rows sent again under their batch id count once', async () => {
        await store.usage.addUsageMinutes([row()], 'rows-1');
        await store.usage.addUsageMinutes([row()], 'rows-1');
        await store.usage.addUsageMinutes([row({ requests: 1, computeUnits: 26, latencyMsSum: 1, latency: [1, 0, 0, 0, 0, 0] })], 'rows-2');
        const rows = await store.usage.listUsageMinutes({ from: '2026-03-01T10:00', to: '2026-03-01T10:01' });
        assert.deepEqual(rows, [row({ requests: 3, computeUnits: 78, latencyMsSum: 10, latency: [2, 1, 0, 0, 0, 0] })]);
      });
    });

    describe('usage roll-up, paging and retention', () => {
      const row = (over: Partial<UsageMinute> = {}): UsageMinute => ({
        minute: '2026-03-01T10:00', accountId: 'acc-1', keyId: 'key-1', network: 'mainnet', method: 'eth_call', code: 0,
        requests: 1, computeUnits: 26, latencyMsSum: 3, latency: [1, 0, 0, 0, 0, 0], ...over,
      });
      const all = () => store.usage.listUsageMinutes({ from: '2026-01-01T00:00', to: '2027-01-01T00:00' });
      const sum = (rows: UsageMinute[]) => rows.reduce((t, r) => ({ requests: t.requests + r.requests, computeUnits: t.computeUnits + r.computeUnits, latencyMsSum: t.latencyMsSum + r.latencyMsSum, l0: t.l0 + r.latency[0] }), { requests: 0, computeUnits: 0, latencyMsSum: 0, l0: 0 });

      test('drops minute rows an hour at a time; reads of those minutes read the hours: fewer rows, the same totals', async () => {
        const rows: UsageMinute[] = [];
        for (let m = 0; m < 60; m++) {
          const minute = `2026-03-01T10:${String(m).padStart(2, '0')}`;
          rows.push(row({ minute }), row({ minute, method: 'eth_chainId', computeUnits: 0 }), row({ minute, keyId: 'key-2', accountId: 'acc-2' }));
        }
        rows.push(row({ minute: '2026-03-01T11:05' }), row({ minute: '2026-03-01T12:00' }));
        await store.usage.addUsageMinutes(rows);
        const before = sum(await all());
        assert.equal(await store.usage.dropMinuteHour('2026-03-01T12:00'), undefined, 'no minute row goes before its hour is rolled up');
        while ((await store.usage.rollUp('2026-03-01T12:00')) !== undefined);
        // 180 rows of the cells, 120 of everyone's (two a minute: eth_call of both accounts added up, and eth_chainId).
        assert.deepEqual(await store.usage.dropMinuteHour('2026-03-01T12:00'), { hour: '2026-03-01T10:00', removed: 300 });
        // A read while only some hours before the mark are gone still counts every call once.
        assert.deepEqual(sum(await all()), before);
        assert.deepEqual(await store.usage.dropMinuteHour('2026-03-01T12:00'), { hour: '2026-03-01T11:00', removed: 2 });
        assert.equal(await store.usage.dropMinuteHour('2026-03-01T12:00'), undefined, 'the hour not yet due stays');
        const after = await all();
        console.log(`usage minute rows dropped: ${rows.length} rows -> ${after.length} rows read, ${before.requests} requests before and after`);
        assert.equal(after.length, 5);
        assert.deepEqual(sum(after), before);
        assert.deepEqual(after.find((r) => r.minute === '2026-03-01T10:00' && r.keyId === 'key-1' && r.method === 'eth_call'), row({ requests: 60, computeUnits: 1560, latencyMsSum: 180, latency: [60, 0, 0, 0, 0, 0] }));
        assert.equal(after.find((r) => r.minute === '2026-03-01T12:00')?.requests, 1, 'the minute after the mark is read as a minute');
        // A late flush of a dropped minute counts at once (in its hour), and its minute row goes with the next drop.
        await store.usage.addUsageMinutes([row({ minute: '2026-03-01T10:30' })]);
        assert.equal(sum(await all()).requests, before.requests + 1);
        assert.equal((await store.usage.dropMinuteHour('2026-03-01T12:00'))?.removed, 2, "the late row and everyone's");
        assert.equal(sum(await all()).requests, before.requests + 1);
      });

      test('rolls minute rows up into their hour and day rows: reads the same before, between and after, each call once', async () => {
        // Minutes of a later year: a new store has rolled up no hour of it yet, so flushes keep them as minute rows alone.
        const rows = [
          row({ minute: '2030-03-01T10:00' }), row({ minute: '2030-03-01T10:59', code: -32005, computeUnits: 0 }), row({ minute: '2030-03-01T11:00' }),
          row({ minute: '2030-03-02T00:00' }), row({ minute: '2030-03-01T10:07', accountId: 'acc-2', keyId: 'key-2' }),
        ];
        await store.usage.addUsageMinutes(rows);
        const range = { from: '2030-03-01T00:00', to: '2030-03-03T00:00' };
        const cells = (list: UsageMinute[]) => list.map((r) => [r.minute, r.keyId, r.code, r.requests, r.computeUnits, r.latency[0]]);
        const reads = async () => ({
          hours: cells(await store.usage.listUsageMinutes({ ...range, grain: 'hour', accountId: 'acc-1' })),
          days: cells(await store.usage.listUsageMinutes({ ...range, grain: 'day' })),
          everyone: cells(await store.usage.listUsageMinutes({ ...range, grain: 'day', accountId: EVERYONE })),
          sums: await store.usage.sumUsageMinutes({ ...range, grain: 'hour' }),
          top: (await store.usage.topAccounts({ ...range, grain: 'day' }, 5)).map((a) => [a.accountId, a.requests]),
        });
        const before = await reads();
        assert.deepEqual(before.hours, [
          ['2030-03-01T10:00', 'key-1', -32005, 1, 0, 1], ['2030-03-01T10:00', 'key-1', 0, 1, 26, 1],
          ['2030-03-01T11:00', 'key-1', 0, 1, 26, 1], ['2030-03-02T00:00', 'key-1', 0, 1, 26, 1],
        ]);
        assert.deepEqual(before.days, [
          ['2030-03-01T00:00', 'key-1', -32005, 1, 0, 1], ['2030-03-01T00:00', 'key-1', 0, 2, 52, 2], ['2030-03-01T00:00', 'key-2', 0, 1, 26, 1],
          ['2030-03-02T00:00', 'key-1', 0, 1, 26, 1],
        ]);
        assert.deepEqual(before.sums, { requests: 5, errors: 1, computeUnits: 104 });
        assert.equal(await store.usage.dropMinuteHour('2030-03-02T00:00'), undefined, 'minute rows of hours not rolled up stay');

        assert.deepEqual(await store.usage.rollUp('2030-03-01T10:30'), { from: '2030-03-01T10:00', to: '2030-03-01T10:30' }, 'from the first minute with calls');
        assert.equal(await store.usage.rollUp('2030-03-01T10:30'), undefined, 'nothing left before the bound');
        assert.deepEqual(await reads(), before, 'an hour rolled up in part reads as its minutes did');
        assert.deepEqual(await store.usage.rollUp('2030-03-01T11:00'), { from: '2030-03-01T10:59', to: '2030-03-01T11:00' });
        assert.deepEqual(await reads(), before, 'the rolled-up hour and the minutes after it read as the minutes did');

        // A late flush of a rolled-up hour, a flush of one not rolled up and two roll-ups at once: each call counts once.
        await Promise.all([
          store.usage.rollUp('2030-03-03T00:00'), store.usage.rollUp('2030-03-03T00:00'),
          store.usage.addUsageMinutes([row({ minute: '2030-03-01T10:30' }), row({ minute: '2030-03-01T11:30' })]),
        ]);
        while ((await store.usage.rollUp('2030-03-03T00:00')) !== undefined);
        const after = await reads();
        assert.deepEqual(after.sums, { requests: 7, errors: 1, computeUnits: 156 });
        assert.deepEqual(after.hours.filter((h) => h[2] === 0).map((h) => [h[0], h[3]]), [['2030-03-01T10:00', 2], ['2030-03-01T11:00', 2], ['2030-03-02T00:00', 1]]);
        assert.deepEqual(after.everyone, [['2030-03-01T00:00', EVERYONE, -32005, 1, 0, 1], ['2030-03-01T00:00', EVERYONE, 0, 5, 130, 5], ['2030-03-02T00:00', EVERYONE, 0, 1, 26, 1]]);
        assert.deepEqual(after.top, [['acc-1', 6], ['acc-2', 1]]);
        // Rolled up, the minute rows may go: the same totals from the hour rows.
        assert.equal((await store.usage.dropMinuteHour('2030-03-02T01:00'))?.hour, '2030-03-01T10:00');
        while ((await store.usage.dropMinuteHour('2030-03-02T01:00')) !== undefined);
        assert.deepEqual(await reads(), after);
        assert.deepEqual(await store.usage.sumUsageMinutes(range), after.sums, 'the minutes read from the hours');
      });

      test('reads rows in pages, each after the last of the one before, as one read would', async () => {
        const rows: UsageMinute[] = [];
        for (let m = 0; m < 7; m++) for (const keyId of ['k-a', 'k-b']) for (const code of [0, 3]) rows.push(row({ minute: `2026-03-01T10:0${m}`, keyId, code }));
        rows.push(row({ accountId: 'acc-2', keyId: 'k-z' }));
        await store.usage.addUsageMinutes(rows);
        const q = { from: '2026-03-01T00:00', to: '2026-03-02T00:00', accountId: 'acc-1' };
        const whole = await store.usage.listUsageMinutes(q);
        const paged: UsageMinute[] = [];
        for (let page = await store.usage.listUsageMinutes({ ...q, limit: 5 }); page.length > 0;) {
          assert.ok(page.length <= 5);
          paged.push(...page);
          const last = page[page.length - 1];
          page = await store.usage.listUsageMinutes({ ...q, limit: 5, after: last });
        }
        assert.equal(whole.length, 28);
        assert.deepEqual(paged, whole);
      });

      test('counts the rows a read would answer, no further than a cap', async () => {
        const rows: UsageMinute[] = [];
        for (let m = 0; m < 5; m++) for (const keyId of ['k-a', 'k-b']) for (const network of ['mainnet', 'sepolia']) rows.push(row({ minute: `2026-03-01T10:0${m}`, keyId, network }));
        rows.push(row({ accountId: 'acc-2', keyId: 'k-z' }), row({ minute: '2026-03-01T10:05' }));
        await store.usage.addUsageMinutes(rows);
        const q = { from: '2026-03-01T10:00', to: '2026-03-01T10:05', accountId: 'acc-1' };
        for (const f of [q, { ...q, keyId: 'k-a' }, { ...q, network: 'sepolia' }, { ...q, keyId: 'k-b', network: 'mainnet' }, { ...q, accountId: 'acc-2' }, { ...q, accountId: undefined }]) {
          const n = (await store.usage.listUsageMinutes(f)).length;
          assert.equal(await store.usage.countUsageMinutes(f, 1000), n, `as many as the read of ${JSON.stringify(f)}`);
          assert.equal(await store.usage.countUsageMinutes(f, 3), Math.min(n, 3), `up to the cap for ${JSON.stringify(f)}`);
        }
        assert.equal(await store.usage.countUsageMinutes(q, 1000), 20, 'the end of the range is left out, and the other account');
        assert.equal(await store.usage.countUsageMinutes(q, 21), 20);
        assert.equal(await store.usage.countUsageMinutes(q, 20), 20);
        assert.equal(await store.usage.countUsageMinutes(q, 19), 19);
        assert.equal(await store.usage.countUsageMinutes({ ...q, from: '2026-03-02T00:00', to: '2026-03-03T00:00' }, 1000), 0);
      });

      test('prunes webhook test events written before a time, delivered or not; other events stay', async () => {
        await store.plans.createPlan(freePlan);
        const acct = (await store.accounts.createAccount(newAccount())).id;
        await store.webhooks.createWebhook({ id: 'wt', accountId: acct, network: 'mainnet', kind: 'block.mined', url: 'https://example.com/h', options: {}, secret: 's', status: 'active' });
        const T = (h: number) => new Date(Date.UTC(2026, 10, 23, h)).toISOString();
        const ev = (id: string, type: string, h: number) => ({ id, webhookId: 'wt', type, body: '{}', createdAt: T(h) });
        await store.webhookEvents.addWebhookEvents([ev('t-old', 'webhook.test', 1), ev('b-old', 'block.mined', 1), ev('t-new', 'webhook.test', 5)]);
        assert.equal(await store.webhookEvents.pruneWebhookTestEvents(T(3)), 1);
        assert.deepEqual((await store.webhookEvents.listWebhookEvents('wt', 10)).map((e) => e.id).sort(), ['b-old', 't-new']);
      });
    });

    describe('usage filters', () => {
      const row = (over: Partial<UsageMinute> = {}): UsageMinute => ({
        minute: '2026-03-01T10:00', accountId: 'acc-1', keyId: 'key-1', network: 'mainnet', method: 'eth_call', code: 0,
        requests: 1, computeUnits: 26, latencyMsSum: 3, latency: [1, 0, 0, 0, 0, 0], ...over,
      });

      test('filters usage by method and by outcome (results, errors, one code), in reads, counts and sums alike', async () => {
        await store.usage.addUsageMinutes([
          row(), row({ method: 'eth_chainId', requests: 4, computeUnits: 0 }), row({ code: -32005, requests: 2, computeUnits: 0 }),
          row({ code: -32010, method: '(refused)', requests: 3, computeUnits: 0 }), row({ accountId: 'acc-2', keyId: 'key-9', code: -32005 }),
        ]);
        const q = { from: '2026-03-01T00:00', to: '2026-03-02T00:00', accountId: 'acc-1' };
        const cases: Array<[Partial<UsageQuery>, number, number, number]> = [
          [{}, 10, 5, 26], [{ method: 'eth_call' }, 3, 2, 26], [{ status: 'ok' }, 5, 0, 26], [{ status: 'error' }, 5, 5, 0],
          [{ status: -32005 }, 2, 2, 0], [{ status: -32010, method: '(refused)' }, 3, 3, 0], [{ method: 'eth_call', status: 'ok' }, 1, 0, 26],
        ];
        for (const [f, requests, errors, computeUnits] of cases) {
          const rows = await store.usage.listUsageMinutes({ ...q, ...f });
          assert.equal(rows.reduce((n, r) => n + r.requests, 0), requests, `read of ${JSON.stringify(f)}`);
          assert.equal(await store.usage.countUsageMinutes({ ...q, ...f }, 100), rows.length, `count of ${JSON.stringify(f)}`);
          assert.deepEqual(await store.usage.sumUsageMinutes({ ...q, ...f }), { requests, errors, computeUnits }, `sums of ${JSON.stringify(f)}`);
        }
        assert.deepEqual(await store.usage.sumUsageMinutes({ ...q, from: '2026-04-01T00:00', to: '2026-04-02T00:00' }), { requests: 0, errors: 0, computeUnits: 0 });
      });
    });

  });
}
