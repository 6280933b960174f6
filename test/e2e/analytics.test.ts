/**
 * Sessions, analytics and /metrics through the wire: logins and their CSRF token, what a member may see,
 * analytics that equal the requests sent, and /metrics that a Prometheus parser reads with the same counts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import parsePrometheus from 'parse-prometheus-text-format';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

type Res = { status: number; body: any; headers: Headers };

describe('dashboard sessions, analytics and metrics', { timeout: 120_000 }, () => {
  let g: TestGateway;
  /** A cookie jar of one: the session cookie a browser would keep. */
  const login = async (email: string, password: string) => {
    const res = await fetch(`${g.url}/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    const body = await res.json() as any;
    const cookie = res.headers.get('set-cookie') ?? '';
    return { status: res.status, body, cookie: cookie.split(';')[0], setCookie: cookie };
  };
  const call = async (method: string, path: string, opts: { cookie?: string; csrf?: string; bearer?: string; body?: unknown } = {}): Promise<Res> => {
    const headers: Record<string, string> = {};
    if (method !== 'GET') headers['content-type'] = 'application/json';
    if (opts.cookie) headers.cookie = opts.cookie;
    if (opts.csrf) headers['x-csrf-token'] = opts.csrf;
    if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
    const res = await fetch(`${g.url}/api/v1${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  let alice: { id: string; key: string };
  let bob: { id: string; key: string };

  before(async () => {
    g = await startTestGateway({ analytics: { flushMs: 60_000 }, limits: { unknownKeys: { perSecond: 1, burst: 12 } } });
    const make = async (name: string) => {
      const a = await g.gw.accounts.createAccount({ name, email: `${name}@example.com`, password: `${name}-password-123` });
      return { id: a.id, key: (await g.gw.accounts.createKey(a.id, { name: `${name}'s key` })).value };
    };
    alice = await make('alice');
    bob = await make('bob');
  });
  after(async () => { await g?.close(); });

  test('a login sets an HttpOnly, SameSite=Strict cookie; changes need its CSRF token; logout ends it', async () => {
    const s = await login('alice@example.com', 'alice-password-123');
    assert.equal(s.status, 200);
    assert.match(s.setCookie, /HttpOnly/i);
    assert.match(s.setCookie, /SameSite=Strict/i);
    assert.doesNotMatch(s.setCookie, /Secure/i, 'plain HTTP on loopback: no Secure flag (it would never be sent back)');
    assert.equal((await call('GET', '/keys', { cookie: s.cookie })).status, 200, 'the session reads');
    const noToken = await call('POST', '/keys', { cookie: s.cookie, body: { name: 'x' } });
    assert.equal(noToken.status, 403);
    assert.match(noToken.body.error.message, /CSRF token/);
    assert.equal((await call('POST', '/keys', { cookie: s.cookie, csrf: 'forged', body: { name: 'x' } })).status, 403);
    assert.equal((await call('POST', '/keys', { cookie: s.cookie, csrf: s.body.csrfToken, body: { name: 'made with the session' } })).status, 201);
    assert.equal((await call('DELETE', '/session', { cookie: s.cookie, csrf: s.body.csrfToken })).status, 204);
    assert.equal((await call('GET', '/keys', { cookie: s.cookie })).status, 401, 'logged out');
  });

  test('nothing answers without a session or a key', async () => {
    for (const [m, p] of [['GET', '/keys'], ['GET', '/analytics'], ['GET', '/networks'], ['GET', '/operator/accounts'], ['GET', '/operator/analytics'], ['GET', '/session'], ['POST', '/keys'], ['DELETE', '/session']] as const) {
      assert.equal((await call(m, p, m === 'GET' ? {} : { body: {} })).status, 401, `${m} ${p}`);
    }
    const member = await login('bob@example.com', 'bob-password-123');
    assert.equal((await call('GET', '/operator/accounts', { cookie: member.cookie })).status, 403, "a member's session is not an operator's");
  });

  test('analytics equal the requests sent: counts per method, errors, compute units; /metrics agrees', async () => {
    const rpc = (key: string, body: unknown) => g.rpc(body, { key });
    for (let i = 0; i < 5; i++) await rpc(alice.key, { jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] });
    await rpc(alice.key, [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_blockNumber', params: [] })));
    for (let i = 0; i < 2; i++) await rpc(alice.key, { jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: ['not an address', 'latest'] });
    await rpc(alice.key, { jsonrpc: '2.0', id: 9, method: 'eth_madeUp', params: [] });
    await rpc(bob.key, { jsonrpc: '2.0', id: 1, method: 'eth_gasPrice', params: [] });

    const a = await call('GET', '/analytics', { bearer: alice.key });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    const by = Object.fromEntries(a.body.byMethod.map((m: any) => [m.method, m]));
    const costs = g.gw.networks.get('mainnet')!.methods;
    const cost = (m: string) => costs.get(m)!.cost;
    const invalid = g.gw.config.limits.invalidCost;
    console.log(`analytics: ${JSON.stringify(a.body.byMethod.map((m: any) => [m.method, m.requests, m.computeUnits, m.errors]))}; quota ${JSON.stringify(a.body.quota)}`);
    assert.deepEqual([by.eth_chainId.requests, by.eth_chainId.computeUnits, by.eth_chainId.errors], [5, 5 * cost('eth_chainId'), 0]);
    assert.deepEqual([by.eth_blockNumber.requests, by.eth_blockNumber.computeUnits], [3, 3 * cost('eth_blockNumber')]);
    assert.deepEqual([by.eth_getBalance.requests, by.eth_getBalance.errors, by.eth_getBalance.computeUnits], [2, 2, 2 * invalid]);
    assert.deepEqual([by['(invalid)'].requests, by['(invalid)'].errors], [1, 1]);
    assert.equal(by.eth_gasPrice, undefined, "another account's calls are not in alice's analytics");
    assert.equal(a.body.totals.requests, 11);
    assert.deepEqual(a.body.byCode.map((c: any) => [c.code, c.requests]).sort(), [[-32601, 1], [-32602, 2], [0, 8]].sort());
    assert.equal(a.body.series.reduce((n: number, s: any) => n + s.requests, 0), 11, 'the time series adds up');
    assert.ok(a.body.quota.limit > 0);
    assert.equal(a.body.quota.used, a.body.totals.computeUnits, 'the quota used this month is exact: what these calls cost, none behind');
    // Rolled up into hour and day rows (as the retention job does once the minutes are over), the same reports.
    const span = `from=${new Date(Date.now() - 86_400_000).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}`;
    const reports = async () => Promise.all(['hour', 'day'].map(async (bucket) => {
      const r = await call('GET', `/analytics?bucket=${bucket}&${span}`, { bearer: alice.key });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return { totals: r.body.totals, byMethod: r.body.byMethod, series: r.body.series };
    }));
    const minutesAddedUp = await reports();
    assert.deepEqual(minutesAddedUp.map((r) => r.totals.requests), [11, 11]);
    // As the job does once these minutes are over by more than a flush interval (60 s here) and 10 s.
    assert.ok(await g.gw.retention.rollUp(Date.now() + 180_000) > 0, 'the minutes were rolled up');
    assert.deepEqual(await reports(), minutesAddedUp, 'the hour and day rows read as the minute rows added up did');
    // Bob's own view has his call only; his key cannot read alice's key's usage.
    const b = await call('GET', `/analytics?keyId=${encodeURIComponent((await g.gw.accounts.listKeys(alice.id))[0].id)}`, { bearer: bob.key });
    assert.equal(b.body.totals.requests, 0);

    const text = await (await fetch(`${g.url}/metrics`)).text();
    const families = parsePrometheus(text) as Array<{ name: string; metrics: Array<{ labels?: Record<string, string>; value?: string }> }>;
    const family = (name: string) => families.find((f) => f.name === name)!;
    const count = (method: string, code: string) => Number(family('nodegate_rpc_requests_total').metrics.find((m) => m.labels?.method === method && m.labels?.code === code)?.value ?? 0);
    assert.equal(count('eth_chainId', '0'), 5);
    assert.equal(count('eth_blockNumber', '0'), 3);
    assert.equal(count('eth_getBalance', '-32602'), 2);
    assert.equal(count('eth_gasPrice', '0'), 1);
    const up = family('nodegate_upstream_up').metrics.filter((m) => m.labels?.network === 'mainnet');
    assert.deepEqual(up.map((m) => m.value), ['1'], 'the embedded chain is up');
    assert.ok(family('nodegate_process_cpu_seconds_total'), 'process metrics');
    // Calls to the node by outcome: eth_gasPrice at least was answered by the node; none failed.
    const upstreamCalls = (name: string) => family(name).metrics.filter((m) => m.labels?.network === 'mainnet');
    assert.deepEqual(upstreamCalls('nodegate_upstream_calls_total').map((m) => m.labels?.outcome), ['answer'], 'only answers: no failure series');
    assert.ok(Number(upstreamCalls('nodegate_upstream_calls_total')[0].value) >= 1, 'the node answered calls');
    assert.ok(Number(upstreamCalls('nodegate_upstream_call_seconds_total')[0].value) > 0, 'their time is summed');
    // Ten HTTP requests to the RPC endpoint (alice's nine, bob's one), each timed once; the buckets are cumulative.
    // (The parser keeps only a histogram's buckets, without labels: the lines are read here.)
    assert.equal((family('nodegate_rpc_request_duration_seconds') as unknown as { type: string }).type, 'HISTOGRAM');
    assert.match(text, /\nnodegate_rpc_request_duration_seconds_count\{network="mainnet"\} 10\n/);
    const cumulative = [...text.matchAll(/\nnodegate_rpc_request_duration_seconds_bucket\{network="mainnet",le="[^"]+"\} (\d+)/g)].map((m) => Number(m[1]));
    assert.equal(cumulative.length, 7, 'six bounds and +Inf');
    assert.deepEqual(cumulative, [...cumulative].sort((x, y) => x - y), 'cumulative');
    assert.equal(cumulative.at(-1), 10);
    console.log(`metrics: ${families.length} families, requests_total eth_chainId=${count('eth_chainId', '0')}`);
  });

  test('in the dashboard session, usage filters by key and status show a refused call of that key, and /metrics counts it', async () => {
    const s = await login('bob@example.com', 'bob-password-123');
    const made = await call('POST', '/keys', { cookie: s.cookie, csrf: s.body.csrfToken, body: { name: 'fenced', ipAllowlist: ['192.0.2.1'] } });
    assert.equal(made.status, 201);
    assert.equal((await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }, { key: made.body.value })).status, 403);
    const r = await call('GET', `/analytics?keyId=${made.body.id}&status=error`, { cookie: s.cookie });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.byCode.map((c: any) => [c.code, c.requests]), [[-32011, 1]]);
    assert.deepEqual(r.body.byMethod.map((m: any) => m.method), ['(refused)'], 'refused before its body was read: no method');
    assert.equal((await call('GET', `/analytics?keyId=${made.body.id}&status=ok`, { cookie: s.cookie })).body.totals.requests, 0);
    const csv = await fetch(`${g.url}/api/v1/analytics.csv?keyId=${made.body.id}`, { headers: { cookie: s.cookie } });
    assert.equal(csv.status, 200);
    assert.match(await csv.text(), new RegExp(`,${made.body.id},fenced,mainnet,\\(refused\\),-32011,1,0,0\r\n`));
    const text = await (await fetch(`${g.url}/metrics`)).text();
    assert.match(text, /nodegate_rpc_requests_total\{[^}]*method="\(refused\)"[^}]*\} [1-9]/);
  });

  test('/metrics answers only the addresses of metrics.allow', async () => {
    const other = await startTestGateway({ metrics: { allow: ['10.1.2.3'] } });
    try {
      assert.equal((await fetch(`${other.url}/metrics`)).status, 404);
    } finally {
      await other.close();
    }
  });

  test('repeated wrong passwords get the same 401, then 429 before any password is checked', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await login('alice@example.com', `wrong-${i}`)).status);
    console.log(`wrong passwords: ${statuses.join(' ')}`);
    assert.equal(statuses[0], 401);
    assert.ok(statuses.includes(429), 'refused after repeated failures');
    assert.ok(statuses.slice(statuses.indexOf(429)).every((s) => s === 429), 'and refused from then on');
  });
});
