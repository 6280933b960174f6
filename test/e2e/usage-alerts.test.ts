/**
 * Usage you can filter and alerts, through the wire: analytics by key, method and status; a known key's
 * refusals (401, 403, 404, 429) counted under it while its last use stays; the CSV export adding up to the report;
 * quota alerts sent once by mail and webhook with two checkers on one store; an error-rate alert that re-arms.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { AlertChecker } from '../../src/alerts/alert-checker.ts';
import type { MailQueue, OutgoingMail } from '../../src/mail/mail-queue.ts';
import { sqlitePath } from '../../src/store/open-store.ts';
import { sqliteStores } from '../../src/store/open-store.ts';
import { startAnvil } from '../helpers/anvil.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';

const noPostgres = await postgresSkipReason('usage alerts on two gateways');

type Res = { status: number; body: any; text: string; headers: Headers };

/** A MailQueue that keeps what it is given (the real one writes the outbox; the alert's part ends at enqueue). */
function recordingMail(): MailQueue & { sent: OutgoingMail[] } {
  const sent: OutgoingMail[] = [];
  return { configured: true, sent, enqueue: async (m) => { sent.push(m); } };
}

const call = (method: string, params: unknown[] = [], id = 1) => ({ jsonrpc: '2.0', id, method, params });

describe('usage you can filter, refusals counted, CSV, alerts', { timeout: 180_000 }, () => {
  let g: TestGateway;
  const mail = recordingMail();
  /** Usage alert webhook deliveries the receiver acknowledged, by event id. */
  const delivered = new Map<string, { n: number; body: any }>();
  let receiver: Server;
  let receiverUrl = '';

  const api = async (method: string, path: string, bearer: string, body?: unknown): Promise<Res> => {
    const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
    if (method !== 'GET') headers['content-type'] = 'application/json';
    const res = await fetch(`${g.url}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let parsed: any;
    try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = undefined; }
    return { status: res.status, body: parsed, text, headers: res.headers };
  };
  const operator = () => 'Basic ' + Buffer.from('ops@example.com:ops-password-123').toString('base64');
  const opApi = async (path: string) => {
    const res = await fetch(`${g.url}/api/v1${path}`, { headers: { authorization: operator() } });
    return { status: res.status, body: await res.json() as any };
  };
  /** An account of its own on `planId`, with an admin key (for the API) and the keys asked for. */
  const account = async (name: string, planId = 'test', keys: Array<Record<string, unknown>> = [{}]) => {
    const a = await g.gw.accounts.createAccount({ name, email: `${name}@example.com`, planId });
    const admin = (await g.gw.accounts.createKey(a.id, { name: `${name} admin`, type: 'Restricted', permissions: ['admin', 'analytics'] })).value;
    const made = [];
    for (const [i, k] of keys.entries()) made.push(await g.gw.accounts.createKey(a.id, { name: `${name} key ${i}`, ...k }));
    return { id: a.id, admin, keys: made.map((m) => ({ id: m.key.id, value: m.value })) };
  };
  const lastUsed = async (keyId: string) => { await g.gw.keys.flushLastUsed(); return (await g.gw.store.keys.getKey(keyId))!.lastUsedAt; };
  const cost = (method: string) => g.gw.networks.get('mainnet')!.methods.get(method)!.cost;

  before(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const j = JSON.parse(body);
        const d = delivered.get(j.id);
        delivered.set(j.id, { n: (d?.n ?? 0) + 1, body: j });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/alerts`;
    g = await startTestGateway({
      log: { level: process.env.UA_LOG ?? 'silent' }, analytics: { flushMs: 100 }, limits: { usageFlushMs: 100 }, alerts: { checkMs: 100 },
      webhooks: { allowPrivateTargets: true, pollMs: 50, retryBaseMs: 100 },
    }, { mail });
    await g.gw.accounts.createAccount({ name: 'ops', email: 'ops@example.com', password: 'ops-password-123', role: 'operator' });
    await g.gw.accounts.createPlan({ id: 'tiny', name: 'Tiny', cuPerSecond: 100_000, cuPerMonth: 1000, maxBatchSize: 100, debugMethods: false, maxFilters: 10 });
  });
  after(async () => {
    await g?.close();
    receiver?.close();
  });

  test('usage filters by key, method and status count exactly the calls made, for the account and the operator', async () => {
    const a = await account('filters', 'test', [{}, {}]);
    const [k1, k2] = a.keys;
    for (let i = 0; i < 3; i++) await g.rpc(call('eth_chainId'), { key: k1.value });
    await g.rpc([call('eth_blockNumber', [], 1), call('eth_blockNumber', [], 2)], { key: k1.value });
    await g.rpc(call('eth_getBalance', ['not an address', 'latest']), { key: k1.value });
    for (let i = 0; i < 4; i++) await g.rpc(call('eth_chainId'), { key: k2.value });
    const total = async (q: string) => {
      const r = await api('GET', `/analytics?${q}`, a.admin);
      assert.equal(r.status, 200, r.text);
      return r.body.totals.requests as number;
    };
    assert.equal(await total(''), 10);
    assert.equal(await total(`keyId=${k1.id}`), 6);
    assert.equal(await total(`keyId=${k1.id}&method=eth_chainId`), 3);
    assert.equal(await total(`keyId=${k1.id}&status=ok`), 5);
    assert.equal(await total(`keyId=${k1.id}&status=error`), 1);
    assert.equal(await total(`keyId=${k1.id}&status=-32602`), 1, 'one code: invalid params');
    assert.equal(await total(`keyId=${k2.id}&method=eth_chainId&status=ok`), 4);
    assert.equal(await total('method=eth_chainId'), 7);
    assert.equal(await total('status=-32005'), 0);
    const bad = await api('GET', '/analytics?status=teapot', a.admin);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.field, 'status');
    const op = await opApi(`/operator/analytics?accountId=${a.id}&method=eth_chainId&status=ok`);
    assert.equal(op.status, 200);
    assert.equal(op.body.totals.requests, 7);
    assert.equal((await opApi('/operator/analytics?method=eth_blockNumber&keyId=' + k1.id)).body.totals.requests, 2);
  });

  test("the operator's report of everyone counts each call once and lists each account with its own totals, by minute, hour and day", async () => {
    const a = await account('everyone-a', 'test', [{}]);
    const b = await account('everyone-b', 'test', [{}]);
    for (let i = 0; i < 5; i++) await g.rpc(call('eth_chainId'), { key: a.keys[0].value });
    await g.rpc(call('eth_getBalance', ['not an address', 'latest']), { key: a.keys[0].value });
    for (let i = 0; i < 2; i++) await g.rpc(call('eth_blockNumber'), { key: b.keys[0].value });
    const from = new Date(Date.now() - 2 * 86_400_000).toISOString();
    for (const bucket of ['minute', 'hour', 'day']) {
      const range = bucket === 'minute' ? '' : `from=${from}&bucket=${bucket}`;
      const all = await opApi(`/operator/analytics?${range}`);
      assert.equal(all.status, 200, JSON.stringify(all.body));
      const listed = all.body.byAccount as Array<{ accountId: string; requests: number; errors: number; computeUnits: number }>;
      const sum = (k: 'requests' | 'errors' | 'computeUnits') => listed.reduce((n, x) => n + x[k], 0);
      assert.deepEqual({ requests: sum('requests'), errors: sum('errors'), computeUnits: sum('computeUnits') }, all.body.totals, `${bucket}: everyone's totals are the accounts' added up`);
      assert.equal(all.body.series.reduce((n: number, x: { requests: number }) => n + x.requests, 0), all.body.totals.requests, `${bucket}: the series adds up to the totals`);
      assert.deepEqual(all.body.byKey, [], "everyone's report has no key of its own");
      for (const [acct, requests, errors] of [[a, 6, 1], [b, 2, 0]] as const) {
        const own = (await api('GET', `/analytics?${range}`, acct.admin)).body.totals;
        assert.deepEqual(own.requests, requests, `${bucket}: the account's own report`);
        const entry = listed.find((x) => x.accountId === acct.id);
        assert.deepEqual(entry && { requests: entry.requests, errors: entry.errors, computeUnits: entry.computeUnits }, { ...own, errors }, `${bucket}: listed with its own totals`);
      }
    }
  });

  test("a known key's 401 (revoked), 403 (IP allowlist), 404 (unknown network) and 429 (quota) are counted under it; its last use moves on success only", async () => {
    const a = await account('refused', 'tiny', [{ ipAllowlist: ['10.9.8.7'] }, {}, {}]);
    const [fenced, revoked, quota] = a.keys;
    const byCode = async (keyId: string) => {
      const r = await api('GET', `/analytics?keyId=${keyId}`, a.admin);
      return Object.fromEntries(r.body.byCode.map((c: any) => [c.code, c.requests]));
    };

    // 403: the caller's IP is not in the key's allowlist. Never a success: never "last used".
    for (let i = 0; i < 2; i++) assert.equal((await g.rpc(call('eth_chainId'), { key: fenced.value })).status, 403);
    assert.deepEqual(await byCode(fenced.id), { '-32011': 2 });
    assert.equal(await lastUsed(fenced.id), null, 'refused calls are no use');
    const refusedRows = await api('GET', `/analytics?keyId=${fenced.id}&method=(refused)`, a.admin);
    assert.equal(refusedRows.body.totals.requests, 2, 'refused before the body was read: under the method (refused)');

    // 401: a key used once, then revoked: its refusals count under it, its last use stays the success's.
    assert.equal((await g.rpc(call('eth_chainId'), { key: revoked.value })).status, 200);
    const used = await lastUsed(revoked.id);
    assert.ok(used);
    await g.gw.accounts.revokeKey(revoked.id);
    for (let i = 0; i < 3; i++) assert.equal((await g.rpc(call('eth_chainId'), { key: revoked.value })).status, 401);
    // 404: the same key on a network that does not exist (the answer is the network's, the count the key's).
    const lost = await g.rpc(call('eth_chainId'), { key: revoked.value, network: 'goerli' });
    assert.equal(lost.status, 404);
    assert.deepEqual(await byCode(revoked.id), { 0: 1, '-32010': 3, '-32012': 1 });
    assert.equal(await lastUsed(revoked.id), used, 'revoked calls do not move last use');
    const unknown = await api('GET', `/analytics?keyId=${revoked.id}&status=-32012`, a.admin);
    assert.deepEqual(unknown.body.byNetwork.map((n: any) => n.network), ['(unknown)'], 'a made-up network name is never a label');

    // 429: the account's monthly quota (1000 units) spent; then every call is refused and counted.
    let ok = 0;
    let refused = 0;
    for (let i = 0; i < 400 && refused === 0; i++) {
      if ((await g.rpc(call('eth_blockNumber'), { key: quota.value })).status === 200) ok++;
      else refused++;
    }
    assert.equal(refused, 1, 'the quota is spent');
    const before = await lastUsed(quota.id);
    assert.ok(before);
    for (let i = 0; i < 3; i++) assert.equal((await g.rpc(call('eth_blockNumber'), { key: quota.value })).status, 429);
    assert.equal(await lastUsed(quota.id), before, '429s do not move last use');
    assert.deepEqual(await byCode(quota.id), { 0: ok, '-32005': 4 });
  });

  test('the CSV export parses, names its columns, and its sums equal the JSON report, filtered or not; 30 days is a range', async () => {
    const a = await account('csv', 'test', [{ name: 'web, "prod"' }, { name: '=cmd' }]);
    const [k1, k2] = a.keys;
    for (let i = 0; i < 4; i++) await g.rpc(call('eth_chainId'), { key: k1.value });
    await g.rpc(call('eth_getBalance', ['nope', 'latest']), { key: k1.value });
    await g.rpc([call('eth_blockNumber', [], 1), call('eth_gasPrice', [], 2)], { key: k2.value });
    const from = new Date(Date.now() - 30 * 86_400_000).toISOString();
    for (const q of [`from=${from}`, `keyId=${k1.id}`, 'status=ok', 'method=eth_chainId', 'bucket=minute']) {
      const json = await api('GET', `/analytics?${q}`, a.admin);
      assert.equal(json.status, 200, `${q}: ${json.text}`);
      const csv = await api('GET', `/analytics.csv?${q}`, a.admin);
      assert.equal(csv.status, 200, csv.text);
      assert.match(csv.headers.get('content-type')!, /^text\/csv/);
      assert.match(csv.headers.get('content-disposition')!, /^attachment; filename="nodegate-usage-\d{4}-\d\d-\d\dT\d{4}-\d{4}-\d\d-\d\dT\d{4}\.csv"$/);
      const rows = parseCsv(csv.text);
      assert.deepEqual(rows[0], ['time', 'keyId', 'keyName', 'network', 'method', 'code', 'requests', 'computeUnits', 'latencyMsAvg']);
      const body = rows.slice(1).map((r) => Object.fromEntries(rows[0].map((c, i) => [c, r[i]])));
      assert.equal(body.reduce((n, r) => n + Number(r.requests), 0), json.body.totals.requests, `${q}: requests`);
      assert.equal(body.reduce((n, r) => n + Number(r.computeUnits), 0), json.body.totals.computeUnits, `${q}: compute units`);
      assert.equal(body.filter((r) => r.code !== '0').reduce((n, r) => n + Number(r.requests), 0), json.body.totals.errors, `${q}: errors`);
      if (q.startsWith('keyId')) assert.ok(body.every((r) => r.keyId === k1.id && r.keyName === 'web, "prod"'), 'the key named, its name quoted');
    }
    const all = parseCsv((await api('GET', '/analytics.csv', a.admin)).text);
    assert.ok(all.some((r) => r[2] === "'=cmd"), 'a name a spreadsheet would run is not a formula');
    assert.equal((await api('GET', `/analytics?from=${new Date(Date.now() - 32 * 86_400_000).toISOString()}`, a.admin)).status, 400, 'past analytics.maxRangeDays');
  });

  test('GET and PUT /account/alerts: defaults, saved settings, errors naming the field', async () => {
    const a = await account('settings');
    const none = await api('GET', '/account/alerts', a.admin);
    assert.equal(none.status, 200);
    assert.deepEqual(none.body, { settings: { quotaPercents: [], errorRate: null, email: true }, mail: false, recent: [] }, 'mail: false, this gateway has no SMTP');
    const put = await api('PUT', '/account/alerts', a.admin, { quotaPercents: [90, 75, 90, 100], errorRate: { percent: 5, minutes: 15, minRequests: 20 } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.body.settings, { quotaPercents: [75, 90, 100], errorRate: { percent: 5, minutes: 15, minRequests: 20 }, email: true });
    assert.deepEqual((await api('GET', '/account/alerts', a.admin)).body.settings, put.body.settings);
    for (const [body, field] of [[{ quotaPercents: [0] }, 'quotaPercents[0]'], [{ errorRate: { percent: 5, minutes: 0, minRequests: 1 } }, 'errorRate'], [{ sms: true }, 'sms']] as const) {
      const r = await api('PUT', '/account/alerts', a.admin, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'validation_failed');
      assert.ok(r.body.error.field.startsWith(field), `${r.body.error.field} names ${field}`);
    }
    assert.equal((await fetch(`${g.url}/api/v1/account/alerts`)).status, 401);
    const other = await account('settings-other');
    assert.deepEqual((await api('GET', '/account/alerts', other.admin)).body.settings.quotaPercents, [], "one account's settings are its own");
  });

  test('a quota alert at 75% goes out once, by mail and as one usage.threshold webhook event, with two checkers on one store, and not again after more usage', async () => {
    const a = await account('quota-alerts', 'tiny');
    const acc = await g.gw.store.accounts.getAccount(a.id);
    const hook = await g.gw.store.webhooks.createWebhook({ id: 'wh-usage-1', accountId: a.id, network: '', kind: 'usage.threshold', url: receiverUrl, options: {}, secret: 'whsec_test', status: 'active' });
    assert.equal((await api('PUT', '/account/alerts', a.admin, { quotaPercents: [75, 100] })).status, 200);
    // A second instance's checker: its own connection to the same SQLite file, its own mail queue.
    const otherMail = recordingMail();
    const otherStore = sqliteStores(sqlitePath(g.gw.config));
    const other = new AlertChecker(otherStore, pino({ level: 'silent' }), { checkMs: 50, mail: otherMail });
    other.start();
    const mailsTo = () => [...mail.sent, ...otherMail.sent].filter((m) => m.to === acc!.email);
    try {
      // 760 of 1000 units: past 75 %, not 100 %.
      const unit = cost('eth_blockNumber');
      for (let used = 0; used < 760; used += unit) assert.equal((await g.rpc(call('eth_blockNumber'), { key: a.keys[0].value })).status, 200);
      await eventually(() => mailsTo().length > 0, 10_000, 'the quota alert mail');
      await eventually(() => [...delivered.values()].some((d) => d.body.webhookId === hook.id), 10_000, 'the usage.threshold delivery');
      // More usage (still under 100 %) and more rounds of both checkers: nothing new.
      for (let i = 0; i < 3; i++) await g.rpc(call('eth_blockNumber'), { key: a.keys[0].value });
      const month = new Date().toISOString().slice(0, 7);
      const spent = 760 + 3 * unit;
      // Rounds of both checkers until the store has the new usage (limits.usageFlushMs), and three more after.
      // (Each step lets the timers run: the SQLite store answers without ever yielding to them.)
      for (let i = 0; i < 2000 && (await otherStore.usage.getUsage(a.id, month)) < spent; i++) {
        await Promise.all([g.gw.alerts!.check(), other.check()]);
        await new Promise(setImmediate);
      }
      assert.ok((await otherStore.usage.getUsage(a.id, month)) >= spent);
      for (let round = 0; round < 3; round++) await Promise.all([g.gw.alerts!.check(), other.check()]);
      assert.equal(mailsTo().length, 1, 'one mail for one crossing, whichever instance sent it');
      assert.match(mailsTo()[0].subject, /75% of the monthly quota/);
      const events = await g.gw.store.webhookEvents.listWebhookEvents(hook.id, 10);
      assert.equal(events.length, 1, 'one event in the outbox');
      assert.equal(events[0].type, 'usage.threshold');
      const payload = JSON.parse(events[0].body).event;
      assert.equal(payload.kind, 'quota');
      assert.equal(payload.threshold, 75);
      assert.equal(payload.accountId, a.id);
      assert.equal(payload.period, new Date().toISOString().slice(0, 7));
      assert.ok(payload.value >= 75 && payload.value < 100, String(payload.value));
      assert.deepEqual([...delivered.values()].filter((d) => d.body.webhookId === hook.id).map((d) => d.n), [1], 'delivered once');
      const shown = (await api('GET', '/account/alerts', a.admin)).body.recent;
      assert.deepEqual(shown.map((r: any) => [r.kind, r.threshold, r.period]), [['quota', 75, payload.period]]);
    } finally {
      await other.close();
      await otherStore.close();
    }
  });

  test('an error-rate alert fires, re-arms once the rate is back under its threshold, and fires again', async () => {
    const a = await account('error-alerts');
    const acc = await g.gw.store.accounts.getAccount(a.id);
    assert.equal((await api('PUT', '/account/alerts', a.admin, { errorRate: { percent: 50, minutes: 5, minRequests: 4 }, email: true })).status, 200);
    const mails = () => mail.sent.filter((m) => m.to === acc!.email);
    const bad = () => g.rpc(call('eth_getBalance', ['not an address', 'latest']), { key: a.keys[0].value });
    for (let i = 0; i < 4; i++) await bad();
    await eventually(() => mails().length === 1, 10_000, 'the error-rate alert');
    assert.match(mails()[0].subject, /error rate 100% \(alert at 50%\)/);
    // 12 results: 4 errors of 16 calls, 25 %: the alert re-arms (its row closed, kept as history).
    for (let i = 0; i < 12; i++) await g.rpc(call('eth_chainId'), { key: a.keys[0].value });
    const recent = async () => (await api('GET', '/account/alerts', a.admin)).body.recent as Array<{ kind: string; period: string }>;
    for (let i = 0; i < 2000 && (await recent()).some((r) => r.period === 'open'); i++) {
      await g.gw.alerts!.check();
      await new Promise(setImmediate);
    }
    assert.deepEqual((await recent()).map((r) => r.kind), ['errorRate']);
    assert.notEqual((await recent())[0].period, 'open', 're-armed');
    assert.equal(mails().length, 1, 'nothing sent while under');
    // 20 more errors: 24 of 36, 67 %: above again, a second alert.
    for (let i = 0; i < 20; i++) await bad();
    await eventually(() => mails().length === 2, 10_000, 'the second error-rate alert');
    assert.deepEqual((await recent()).map((r) => r.period === 'open'), [true, false]);
  });
});

describe('usage alerts with two gateways on one PostgreSQL', { timeout: 180_000, skip: noPostgres }, () => {
  test('each gateway checks, the alert goes out once: one mail, one usage.threshold event, not again after more usage', async () => {
    const url = await freshDatabase();
    // Instances that share a store share each chain: both front one node by URL (an embedded chain is one instance's).
    const node = await startAnvil();
    // A configuration each: the loader fills in what it reads.
    const config = () => ({ database: { url }, networks: { mainnet: { chainId: 1, upstream: node.url } }, analytics: { flushMs: 100 }, limits: { usageFlushMs: 100 }, alerts: { checkMs: 50 } });
    const mailA = recordingMail();
    const mailB = recordingMail();
    const a = await startTestGateway(config(), { mail: mailA });
    const b = await startTestGateway(config(), { mail: mailB });
    try {
      await a.gw.accounts.createPlan({ id: 'tiny', name: 'Tiny', cuPerSecond: 100_000, cuPerMonth: 1000, maxBatchSize: 100, debugMethods: false, maxFilters: 10 });
      const acc = await a.gw.accounts.createAccount({ name: 'pg-alerts', email: 'pg-alerts@example.com', planId: 'tiny' });
      const key = (await a.gw.accounts.createKey(acc.id, { name: 'k' })).value;
      const hook = await a.gw.store.webhooks.createWebhook({ id: 'wh-pg-usage', accountId: acc.id, network: '', kind: 'usage.threshold', url: 'https://alerts.example/hook', options: {}, secret: 'whsec_test', status: 'active' });
      // Set through B, used through A: the settings are the store's, not an instance's.
      const put = (bearer: string) => fetch(`${b.url}/api/v1/account/alerts`, { method: 'PUT', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify({ quotaPercents: [50] }) });
      assert.equal((await put(key)).status, 403, 'a Standard key (no admin permission) changes nothing');
      const admin = (await a.gw.accounts.createKey(acc.id, { name: 'admin', type: 'Restricted', permissions: ['admin'] })).value;
      assert.equal((await put(admin)).status, 200);
      for (let i = 0; i < 55; i++) assert.equal((await a.rpc(call('eth_blockNumber'), { key })).status, 200);
      const sent = () => [...mailA.sent, ...mailB.sent].filter((m) => m.to === 'pg-alerts@example.com');
      await eventually(() => sent().length > 0, 15_000, 'the alert mail from either gateway');
      for (let i = 0; i < 10; i++) await a.rpc(call('eth_blockNumber'), { key });
      const month = new Date().toISOString().slice(0, 7);
      for (let i = 0; i < 2000 && (await b.gw.store.usage.getUsage(acc.id, month)) < 650; i++) await Promise.all([a.gw.alerts!.check(), b.gw.alerts!.check()]);
      for (let round = 0; round < 3; round++) await Promise.all([a.gw.alerts!.check(), b.gw.alerts!.check()]);
      assert.equal(sent().length, 1, `one mail (gateway A sent ${mailA.sent.length}, B ${mailB.sent.length})`);
      const events = await b.gw.store.webhookEvents.listWebhookEvents(hook.id, 10);
      assert.equal(events.length, 1);
      assert.equal(JSON.parse(events[0].body).event.threshold, 50);
    } finally {
      await b.close();
      await a.close();
      node.stop();
    }
  });
});

/** RFC 4180 lines into fields (quoted fields with "" inside). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  for (const line of text.split('\r\n').filter((l) => l !== '')) {
    const fields: string[] = [];
    let i = 0;
    while (i <= line.length) {
      if (line[i] === '"') {
        let v = '';
        i++;
        for (;;) {
          if (line[i] === '"' && line[i + 1] === '"') { v += '"'; i += 2; } else if (line[i] === '"') { i++; break; } else v += line[i++];
        }
        fields.push(v);
        i++; // the comma
      } else {
        const end = line.indexOf(',', i);
        fields.push(line.slice(i, end === -1 ? line.length : end));
        i = end === -1 ? line.length + 1 : end + 1;
      }
    }
    rows.push(fields);
  }
  return rows;
}
