import SwaggerParser from '@apidevtools/swagger-parser';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** Every route of the management API (docs/api.md), as the OpenAPI document must list them. */
/** Routes without credentials: limited per address, never a 401. */
const PUBLIC_ROUTES = [
  'POST /api/v1/invitations/accept',
  'POST /api/v1/invitations/preview',
  'GET /api/v1/signup',
  'POST /api/v1/signup',
  'POST /api/v1/password-reset',
  'POST /api/v1/password-reset/complete',
];

const ROUTES = [
  'GET /api/v1/openapi.json',
  'GET /api/v1/account',
  'GET /api/v1/keys',
  'POST /api/v1/keys',
  'GET /api/v1/keys/{id}',
  'PATCH /api/v1/keys/{id}',
  'POST /api/v1/keys/{id}/revoke',
  'POST /api/v1/keys/{id}/rotate',
  'POST /api/v1/keys/revoke',
  'GET /api/v1/operator/plans',
  'POST /api/v1/operator/plans',
  'GET /api/v1/operator/plans/{id}',
  'PATCH /api/v1/operator/plans/{id}',
  'DELETE /api/v1/operator/plans/{id}',
  'GET /api/v1/operator/accounts',
  'POST /api/v1/operator/accounts',
  'GET /api/v1/operator/accounts/{id}',
  'PATCH /api/v1/operator/accounts/{id}',
  'POST /api/v1/operator/accounts/{id}/suspend',
  'POST /api/v1/operator/accounts/{id}/reactivate',
  'GET /api/v1/operator/accounts/{id}/keys',
  'POST /api/v1/operator/accounts/{id}/keys',
  'POST /api/v1/operator/keys/{id}/revoke',
  'GET /api/v1/analytics',
  'GET /api/v1/analytics.csv',
  'GET /api/v1/account/alerts',
  'PUT /api/v1/account/alerts',
  'GET /api/v1/analytics/webhooks',
  'GET /api/v1/networks',
  'GET /api/v1/operator/analytics',
  'GET /api/v1/operator/analytics.csv',
  'GET /api/v1/operator/analytics/webhooks',
  'GET /api/v1/operator/networks',
  'GET /api/v1/requests',
  'GET /api/v1/operator/requests',
  'POST /api/v1/session',
  'GET /api/v1/session',
  'DELETE /api/v1/session',
  'POST /api/v1/session/password',
  'GET /api/v1/account/members',
  'POST /api/v1/account/invitations',
  'DELETE /api/v1/account/invitations/{id}',
  'PATCH /api/v1/account/members/{id}',
  'DELETE /api/v1/account/members/{id}',
  'POST /api/v1/operator/accounts/{id}/reset-link',
  'POST /api/v1/operator/accounts/{id}/invitations',
  ...PUBLIC_ROUTES,
  'POST /api/v1/webhooks',
  'GET /api/v1/webhooks',
  'GET /api/v1/webhooks/{id}',
  'PATCH /api/v1/webhooks/{id}',
  'DELETE /api/v1/webhooks/{id}',
  'POST /api/v1/webhooks/{id}/pause',
  'POST /api/v1/webhooks/{id}/resume',
  'POST /api/v1/webhooks/{id}/rotate-secret',
  'POST /api/v1/webhooks/{id}/secret',
  'POST /api/v1/webhooks/{id}/deliveries/{eventId}/redeliver',
  'POST /api/v1/webhooks/{id}/test',
  'GET /api/v1/webhooks/{id}/deliveries',
];

interface Res { status: number; headers: Headers; body: any; text: string }
type Auth = string | undefined;

describe('management REST API /api/v1 on the wire', () => {
  let g: TestGateway;
  let operator: Auth; // Basic of the bootstrap operator
  /** Every key value handed out: none may appear in any response but the one that created it. */
  const shown = new Set<string>();

  const basic = (email: string, password: string) => 'Basic ' + Buffer.from(`${email}:${password}`).toString('base64');
  const bearer = (key: string) => `Bearer ${key}`;

  async function api(method: string, path: string, auth: Auth, body?: unknown, opts: { raw?: string; type?: string } = {}): Promise<Res> {
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = auth;
    const payload = opts.raw ?? (body === undefined ? undefined : JSON.stringify(body));
    // Every change is sent as JSON, with a body or without (the API refuses it otherwise, see 'changes need JSON').
    if (payload !== undefined || method !== 'GET') headers['content-type'] = opts.type ?? 'application/json';
    if (opts.type === '') delete headers['content-type'];
    const res = await fetch(g.url + path, { method, headers, body: payload });
    const text = await res.text();
    let parsed: any;
    try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = undefined; }
    // Invariants of every answer: no stored hash, no key value shown before, no credential echoed.
    assert.doesNotMatch(text, /"(hash|passwordHash)"/, `${method} ${path} leaks a hash`);
    for (const v of shown) assert.ok(!text.includes(v), `${method} ${path} shows a key value again`);
    const credential = auth?.split(' ')[1];
    if (credential) assert.ok(!text.includes(credential), `${method} ${path} echoes the credential`);
    if (typeof parsed?.value === 'string') shown.add(parsed.value);
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  function assertError(r: Res, status: number, code: string, field?: string) {
    assert.equal(r.status, status, r.text);
    assert.equal(r.body.error.code, code, r.text);
    assert.equal(typeof r.body.error.message, 'string');
    if (field !== undefined) assert.equal(r.body.error.field, field, r.text);
    assert.deepEqual(Object.keys(r.body), ['error']);
  }

  // Fixtures made through the API itself: two member accounts, each with an admin key.
  let alice: { id: string; email: string; password: string; admin: string };
  let bob: { id: string; admin: string; keyId: string };

  async function member(name: string, email: string, password?: string) {
    const r = await api('POST', '/api/v1/operator/accounts', operator, { name, email, ...(password ? { password } : {}) });
    assert.equal(r.status, 201, r.text);
    return r.body;
  }
  async function adminKey(accountId: string, permissions = ['rpc', 'admin']) {
    const r = await api('POST', `/api/v1/operator/accounts/${accountId}/keys`, operator, { name: 'admin', type: 'Restricted', permissions });
    assert.equal(r.status, 201, r.text);
    return r.body as { id: string; value: string };
  }

  before(async () => {
    // Failed authentications are limited per IP (burst 40 here, 5/s): enough for the refusals below, and the
    // last test empties the bucket on purpose.
    g = await startTestGateway({ limits: { unknownKeys: { perSecond: 5, burst: 40 } } });
    operator = basic(g.gw.secrets.operatorEmail!, g.gw.secrets.operatorPassword!);
    shown.add(g.key);
    const a = await member('Alice', 'alice@example.com', 'alice-password-123');
    alice = { id: a.id, email: 'alice@example.com', password: 'alice-password-123', admin: (await adminKey(a.id)).value };
    const b = await member('Bob', 'bob@example.com');
    const bk = await adminKey(b.id);
    bob = { id: b.id, admin: bk.value, keyId: bk.id };
  });
  after(async () => {
    await g?.close();
  });

  describe('OpenAPI document', () => {
    test('is served without credentials, validates, and lists exactly the API routes', async () => {
      const r = await api('GET', '/api/v1/openapi.json', undefined);
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type')!, /^application\/json/);
      await SwaggerParser.validate(structuredClone(r.body));
      assert.equal(r.body.openapi, '3.1.0');
      const listed = Object.entries(r.body.paths as Record<string, Record<string, unknown>>)
        .flatMap(([path, ops]) => Object.keys(ops).filter((m) => m !== 'parameters').map((m) => `${m.toUpperCase()} ${path}`));
      assert.deepEqual(listed.sort(), [...ROUTES].sort());
      assert.ok(!Object.keys(r.body.paths).some((p) => p.startsWith('/v1/') || p.includes(':network')), 'JSON-RPC routes are not in it');
    });

    test('describes credentials, bodies and responses, and no schema has a hash', async () => {
      const doc = (await api('GET', '/api/v1/openapi.json', undefined)).body;
      assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['apiKey', 'operatorPassword', 'session']);
      // The login itself takes no credentials; "who is logged in" takes only the cookie and never answers 403.
      const open = new Set(['POST /api/v1/session', ...PUBLIC_ROUTES]);
      for (const route of ROUTES.slice(1)) {
        const [method, path] = route.split(' ');
        const op = doc.paths[path][method.toLowerCase()];
        assert.ok(op.summary && (open.has(route) || op.security?.length), `${route} has a summary and security`);
        assert.ok((PUBLIC_ROUTES.includes(route) || op.responses['401']) && op.responses['429'] && (open.has(route) || route === 'GET /api/v1/session' || op.responses['403']), `${route} documents 401, 403 and 429`);
        if (method === 'POST' || method === 'PATCH') {
          if (!/(revoke|suspend|reactivate|pause|resume|rotate-secret|secret|redeliver|test|reset-link)$/.test(path)) assert.ok(op.requestBody, `${route} has a body`);
        }
      }
      assert.doesNotMatch(JSON.stringify(doc.components.schemas), /"(hash|passwordHash)"/);
      assert.ok(doc.components.schemas.CreatedKey.properties.value);
      assert.equal(doc.components.schemas.Key.properties.value, undefined);
    });
  });

  describe('authentication', () => {
    test('no credentials: 401 with WWW-Authenticate, account and operator routes', async () => {
      let r = await api('GET', '/api/v1/keys', undefined);
      assertError(r, 401, 'unauthorized');
      assert.match(r.headers.get('www-authenticate')!, /^Bearer realm=/);
      r = await api('GET', '/api/v1/operator/plans', undefined);
      assertError(r, 401, 'unauthorized');
      assert.match(r.headers.get('www-authenticate')!, /Basic realm=.*Bearer realm=/);
    });

    test('wrong password, unknown email and malformed Basic: 401, the same message, nothing echoed', async () => {
      const wrong = await api('GET', '/api/v1/operator/plans', basic(g.gw.secrets.operatorEmail!, 'not-the-password'));
      assertError(wrong, 401, 'unauthorized');
      assert.match(wrong.headers.get('www-authenticate')!, /^Basic /);
      assert.ok(!wrong.text.includes('not-the-password'));
      const unknown = await api('GET', '/api/v1/operator/plans', basic('nobody@example.com', 'whatever-password'));
      assertError(unknown, 401, 'unauthorized');
      assert.equal(unknown.body.error.message, wrong.body.error.message);
      assertError(await api('GET', '/api/v1/operator/plans', 'Basic bm9jb2xvbg=='), 401, 'unauthorized');
      assertError(await api('GET', '/api/v1/operator/plans', 'Digest abc'), 401, 'unauthorized');
    });

    test('an unknown or malformed Bearer key is 401 and is not echoed', async () => {
      const fake = 'ngk_' + 'A'.repeat(43);
      const r = await api('GET', '/api/v1/account', bearer(fake));
      assertError(r, 401, 'unauthorized');
      assert.ok(!r.text.includes(fake));
      assertError(await api('GET', '/api/v1/account', 'Bearer'), 401, 'unauthorized');
      assertError(await api('GET', '/api/v1/operator/accounts', bearer(fake)), 401, 'unauthorized');
    });

    test('a key without the admin permission is 403 with the reason', async () => {
      const r = await api('GET', '/api/v1/account', bearer(g.key));
      assertError(r, 403, 'forbidden');
      assert.match(r.body.error.message, /admin permission/);
      const rpcOnly = await adminKey(alice.id, ['rpc']);
      assertError(await api('GET', '/api/v1/keys', bearer(rpcOnly.value)), 403, 'forbidden');
    });

    test('account routes take a key, not a password', async () => {
      const r = await api('GET', '/api/v1/account', operator);
      assertError(r, 401, 'unauthorized');
      assert.match(r.headers.get('www-authenticate')!, /^Bearer /);
    });

    test('a member cannot use operator routes, by password (the one 401 of every failed login) or by admin key', async () => {
      let r = await api('GET', '/api/v1/operator/accounts', basic(alice.email, alice.password));
      assertError(r, 401, 'unauthorized');
      assert.equal(r.body.error.message, 'wrong email or password', 'a login does not say the password was right');
      r = await api('POST', '/api/v1/operator/plans', bearer(alice.admin), { id: 'sneaky', name: 'Sneaky', cuPerSecond: 1, cuPerMonth: 1 });
      assertError(r, 403, 'forbidden');
    });

    test('an operator can also use a key with the operator permission, never a mere admin key of an operator account', async () => {
      const me = (await api('GET', '/api/v1/operator/accounts', operator)).body.accounts.find((a: any) => a.role === 'operator');
      const admin = await adminKey(me.id, ['admin']);
      assertError(await api('GET', '/api/v1/operator/plans', bearer(admin.value)), 403, 'forbidden');
      const k = await adminKey(me.id, ['admin', 'operator']);
      const r = await api('GET', '/api/v1/operator/plans', bearer(k.value));
      assert.equal(r.status, 200, r.text);
      assert.equal((await api('GET', '/api/v1/account', bearer(k.value))).body.role, 'operator');
    });

    test("a key's IP allowlist holds for the API too", async () => {
      const k = await api('POST', '/api/v1/keys', bearer(alice.admin), { name: 'office only', type: 'Restricted', permissions: ['admin'], ipAllowlist: ['10.1.2.0/24'] });
      assert.equal(k.status, 201);
      const r = await api('GET', '/api/v1/keys', bearer(k.body.value));
      assertError(r, 403, 'forbidden');
      assert.match(r.body.error.message, /IP address/);
    });

    test('a remembered password check ends when the account changes: new password, suspension', async () => {
      const op = await api('POST', '/api/v1/operator/accounts', operator, { name: 'Second operator', email: 'op2@example.com', password: 'first-password-1', role: 'operator' });
      assert.equal(op.status, 201, op.text);
      const first = basic('op2@example.com', 'first-password-1');
      assert.equal((await api('GET', '/api/v1/operator/plans', first)).status, 200);
      assert.equal((await api('GET', '/api/v1/operator/plans', first)).status, 200); // remembered
      assert.equal((await api('PATCH', `/api/v1/operator/accounts/${op.body.id}`, operator, { password: 'second-password-2' })).status, 200);
      assertError(await api('GET', '/api/v1/operator/plans', first), 401, 'unauthorized');
      const second = basic('OP2@example.com', 'second-password-2');
      assert.equal((await api('GET', '/api/v1/operator/plans', second)).status, 200);
      assert.equal((await api('POST', `/api/v1/operator/accounts/${op.body.id}/suspend`, operator)).status, 200);
      const r = await api('GET', '/api/v1/operator/plans', second);
      assertError(r, 401, 'unauthorized');
      assert.equal(r.body.error.message, 'wrong email or password', 'the same answer as any failed login');
    });
  });

  describe('account routes', () => {
    test('GET /account: the account and its plan, no password hash', async () => {
      const r = await api('GET', '/api/v1/account', bearer(alice.admin));
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.id, alice.id);
      assert.equal(r.body.email, alice.email);
      assert.equal(r.body.role, 'member');
      assert.equal(r.body.plan.id, r.body.planId);
      assert.equal(typeof r.body.plan.cuPerSecond, 'number');
      assert.ok(!('passwordHash' in r.body));
    });

    test('POST /keys shows the value once; lists and reads show only the prefix', async () => {
      const c = await api('POST', '/api/v1/keys', bearer(alice.admin), { name: 'ci', type: 'Restricted', permissions: ['rpc'], networkAllowlist: ['devnet'], methodAllowlist: ['eth_chainId'] });
      assert.equal(c.status, 201, c.text);
      const value: string = c.body.value;
      assert.match(value, /^ngk_[0-9A-Za-z]{43}$/);
      assert.equal(c.body.prefix, value.slice(0, c.body.prefix.length));
      assert.ok(c.body.prefix.length < 12);
      assert.deepEqual(c.body.permissions, ['rpc']);
      assert.deepEqual(c.body.networkAllowlist, ['testnet']);
      assert.equal(c.body.accountId, alice.id);
      assert.ok(!('hash' in c.body));
      // The invariant in api() fails any later response that contains the value.
      const list = await api('GET', '/api/v1/keys', bearer(alice.admin));
      assert.equal(list.status, 200);
      const listed = list.body.keys.find((k: any) => k.id === c.body.id);
      assert.equal(listed.prefix, c.body.prefix);
      assert.ok(!('value' in listed) && !('hash' in listed));
      const one = await api('GET', `/api/v1/keys/${c.body.id}`, bearer(alice.admin));
      assert.equal(one.status, 200);
      assert.ok(!('value' in one.body));
      assert.ok(list.body.keys.every((k: any) => k.accountId === alice.id));
    });

    test('POST /keys: defaults to Standard; refusals name the field', async () => {
      const s = await api('POST', '/api/v1/keys', bearer(alice.admin), { name: 'web' });
      assert.equal(s.status, 201);
      assert.equal(s.body.type, 'Standard');
      assert.deepEqual(s.body.permissions, ['rpc', 'webhooks', 'analytics']);
      const k = bearer(alice.admin);
      assertError(await api('POST', '/api/v1/keys', k, {}), 400, 'validation_failed', 'name');
      assertError(await api('POST', '/api/v1/keys', k, { name: 5 }), 400, 'validation_failed', 'name');
      assertError(await api('POST', '/api/v1/keys', k, { name: '   ' }), 400, 'validation_failed', 'name');
      assertError(await api('POST', '/api/v1/keys', k, { name: 'x', type: 'Gold' }), 400, 'validation_failed', 'type');
      assertError(await api('POST', '/api/v1/keys', k, { name: 'x', type: 'Restricted' }), 400, 'validation_failed', 'permissions');
      assertError(await api('POST', '/api/v1/keys', k, { name: 'x', type: 'Restricted', permissions: ['root'] }), 400, 'validation_failed', 'permissions[0]');
      assertError(await api('POST', '/api/v1/keys', k, { name: 'x', permissions: ['admin'] }), 400, 'validation_failed', 'permissions');
      assertError(await api('POST', '/api/v1/keys', k, { name: 'x', ipAllowlist: ['300.1.1.1'] }), 400, 'validation_failed', 'ipAllowlist');
      assertError(await api('POST', '/api/v1/keys', k, { name: 'x', originAllowlist: ['not an origin'] }), 400, 'validation_failed', 'originAllowlist');
      assertError(await api('POST', '/api/v1/keys', k, { name: 'x', networkAllowlist: ['nowhere'] }), 400, 'validation_failed', 'networkAllowlist');
      assertError(await api('POST', '/api/v1/keys', k, { name: 'x', methodAllowlist: ['eth_mine'] }), 400, 'validation_failed', 'methodAllowlist');
      assertError(await api('POST', '/api/v1/keys', k, { name: 'x', expiresAt: 'tomorrow' }), 400, 'validation_failed', 'expiresAt');
      assertError(await api('POST', '/api/v1/keys', k, { name: 'x', owner: 'me' }), 400, 'validation_failed', 'owner');
      assertError(await api('POST', '/api/v1/keys', k, ['name']), 400, 'validation_failed', 'body');
    });

    test('a malformed body is 400 and a non-JSON one 415', async () => {
      assertError(await api('POST', '/api/v1/keys', bearer(alice.admin), undefined, { raw: '{"name": ' }), 400, 'bad_request');
      assertError(await api('POST', '/api/v1/keys', bearer(alice.admin), undefined, { raw: 'name=x', type: 'application/x-www-form-urlencoded' }), 415, 'bad_request');
    });

    test('PATCH /keys/{id}: name, allowlists and expiry; type cannot change; fields named', async () => {
      const c = (await api('POST', '/api/v1/keys', bearer(alice.admin), { name: 'to change' })).body;
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const r = await api('PATCH', `/api/v1/keys/${c.id}`, bearer(alice.admin), {
        name: 'changed', ipAllowlist: ['127.0.0.1', '::1/128'], originAllowlist: ['https://app.example'], networkAllowlist: ['mainnet'], methodAllowlist: ['eth_chainId', 'eth_blockNumber'], expiresAt,
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.name, 'changed');
      assert.deepEqual(r.body.ipAllowlist, ['127.0.0.1', '::1/128']);
      assert.deepEqual(r.body.originAllowlist, ['https://app.example']);
      assert.deepEqual(r.body.networkAllowlist, ['mainnet']);
      assert.deepEqual(r.body.methodAllowlist, ['eth_chainId', 'eth_blockNumber']);
      assert.equal(r.body.expiresAt, expiresAt);
      const cleared = await api('PATCH', `/api/v1/keys/${c.id}`, bearer(alice.admin), { ipAllowlist: [], expiresAt: null });
      assert.deepEqual(cleared.body.ipAllowlist, []);
      assert.equal(cleared.body.expiresAt, null);
      assert.equal(cleared.body.name, 'changed');
      const k = bearer(alice.admin);
      assertError(await api('PATCH', `/api/v1/keys/${c.id}`, k, { type: 'Dedicated' }), 400, 'validation_failed', 'type');
      assertError(await api('PATCH', `/api/v1/keys/${c.id}`, k, {}), 400, 'validation_failed', 'body');
      assertError(await api('PATCH', `/api/v1/keys/${c.id}`, k, { ipAllowlist: '127.0.0.1' }), 400, 'validation_failed', 'ipAllowlist');
      assertError(await api('PATCH', `/api/v1/keys/${c.id}`, k, { ipAllowlist: ['10.0.0.0/33'] }), 400, 'validation_failed', 'ipAllowlist');
      assertError(await api('PATCH', `/api/v1/keys/${c.id}`, k, { expiresAt: 'never' }), 400, 'validation_failed', 'expiresAt');
      assertError(await api('PATCH', `/api/v1/keys/${c.id}`, k, { name: '' }), 400, 'validation_failed', 'name');
      assertError(await api('PATCH', '/api/v1/keys/no-such-key', k, { name: 'x' }), 404, 'not_found');
    });

    test("another account's key is 404 for read, change and revoke, exactly like a missing one", async () => {
      const k = bearer(alice.admin);
      const missing = await api('GET', '/api/v1/keys/00000000-0000-0000-0000-000000000000', k);
      assertError(missing, 404, 'not_found');
      const other = await api('GET', `/api/v1/keys/${bob.keyId}`, k);
      assertError(other, 404, 'not_found');
      assert.equal(other.body.error.message, missing.body.error.message);
      assertError(await api('PATCH', `/api/v1/keys/${bob.keyId}`, k, { name: 'mine now' }), 404, 'not_found');
      assertError(await api('POST', `/api/v1/keys/${bob.keyId}/revoke`, k), 404, 'not_found');
      assert.ok(!(await api('GET', '/api/v1/keys', k)).body.keys.some((x: any) => x.id === bob.keyId));
      // Bob's key still works.
      assert.equal((await api('GET', '/api/v1/account', bearer(bob.admin))).status, 200);
    });

    test('POST /keys/{id}/revoke: the very next JSON-RPC request with the key is 401', async () => {
      const c = (await api('POST', '/api/v1/keys', bearer(alice.admin), { name: 'to revoke' })).body;
      const ok = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, { key: c.value });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.result, '0x1');
      const r = await api('POST', `/api/v1/keys/${c.id}/revoke`, bearer(alice.admin));
      assert.equal(r.status, 200, r.text);
      assert.ok(Date.parse(r.body.revokedAt) > 0);
      const refused = await g.rpc({ jsonrpc: '2.0', id: 2, method: 'eth_chainId' }, { key: c.value });
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error.code, -32010);
      assert.equal(refused.body.error.data.reason, 'key_revoked');
      const again = await api('POST', `/api/v1/keys/${c.id}/revoke`, bearer(alice.admin));
      assert.equal(again.status, 200);
      assert.equal(again.body.revokedAt, r.body.revokedAt);
    });

    test('a key can revoke itself; it is refused right after', async () => {
      const self = (await api('POST', '/api/v1/keys', bearer(alice.admin), { name: 'self', type: 'Restricted', permissions: ['admin'] })).body;
      assert.equal((await api('POST', `/api/v1/keys/${self.id}/revoke`, bearer(self.value))).status, 200);
      const r = await api('GET', '/api/v1/keys', bearer(self.value));
      assertError(r, 401, 'unauthorized');
      assert.match(r.body.error.message, /revoked/);
    });

    test('an unknown path under /api/v1 is 404 in the API shape', async () => {
      assertError(await api('GET', '/api/v1/nothing-here', bearer(alice.admin)), 404, 'not_found');
      assertError(await api('PUT', '/api/v1/keys', bearer(alice.admin), {}), 404, 'not_found');
    });
  });

  describe('operator: plans', () => {
    const plan = { id: 'startup', name: 'Startup', cuPerSecond: 100, cuPerMonth: 1_000_000 };

    test('list, create (defaults filled), read', async () => {
      const list = await api('GET', '/api/v1/operator/plans', operator);
      assert.equal(list.status, 200);
      assert.ok(list.body.plans.some((p: any) => p.id === 'free'));
      const c = await api('POST', '/api/v1/operator/plans', operator, plan);
      assert.equal(c.status, 201, c.text);
      assert.deepEqual({ ...c.body, createdAt: undefined, updatedAt: undefined }, { ...plan, maxBatchSize: 100, debugMethods: false, maxFilters: 100, maxKeys: 100, maxWebhooks: 20, subscriptionsPerKey: 100, subscriptionsPerAccount: 500, requestLogHours: 24, requestLogMax: 10000, createdAt: undefined, updatedAt: undefined });
      const one = await api('GET', '/api/v1/operator/plans/startup', operator);
      assert.equal(one.status, 200);
      assert.equal(one.body.name, 'Startup');
      assertError(await api('GET', '/api/v1/operator/plans/nope', operator), 404, 'not_found');
    });

    test('create refusals: duplicate 409, fields named', async () => {
      assertError(await api('POST', '/api/v1/operator/plans', operator, plan), 409, 'conflict');
      assertError(await api('POST', '/api/v1/operator/plans', operator, { ...plan, id: 'Bad Id' }), 400, 'validation_failed', 'id');
      assertError(await api('POST', '/api/v1/operator/plans', operator, { id: 'p2', name: 'P2', cuPerMonth: 5 }), 400, 'validation_failed', 'cuPerSecond');
      assertError(await api('POST', '/api/v1/operator/plans', operator, { ...plan, id: 'p3', cuPerSecond: 0 }), 400, 'validation_failed', 'cuPerSecond');
      assertError(await api('POST', '/api/v1/operator/plans', operator, { ...plan, id: 'p4', debugMethods: 'yes' }), 400, 'validation_failed', 'debugMethods');
      assertError(await api('POST', '/api/v1/operator/plans', operator, { ...plan, id: 'p5', maxBatchSize: 5000 }), 400, 'validation_failed', 'maxBatchSize');
    });

    test('PATCH changes limits; refusals named', async () => {
      const r = await api('PATCH', '/api/v1/operator/plans/startup', operator, { cuPerSecond: 200, debugMethods: true });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.cuPerSecond, 200);
      assert.equal(r.body.debugMethods, true);
      assert.equal(r.body.name, 'Startup');
      assertError(await api('PATCH', '/api/v1/operator/plans/startup', operator, { id: 'other' }), 400, 'validation_failed', 'id');
      assertError(await api('PATCH', '/api/v1/operator/plans/startup', operator, { cuPerMonth: -1 }), 400, 'validation_failed', 'cuPerMonth');
      assertError(await api('PATCH', '/api/v1/operator/plans/nope', operator, { name: 'x' }), 404, 'not_found');
    });

    test('DELETE: refused 409 while an account is on the plan, then 204 and gone', async () => {
      const acct = await member('On startup', 'startup@example.com');
      assert.equal((await api('PATCH', `/api/v1/operator/accounts/${acct.id}`, operator, { planId: 'startup' })).body.planId, 'startup');
      const refused = await api('DELETE', '/api/v1/operator/plans/startup', operator);
      assertError(refused, 409, 'conflict');
      assert.match(refused.body.error.message, /in use/);
      await api('PATCH', `/api/v1/operator/accounts/${acct.id}`, operator, { planId: 'free' });
      const del = await api('DELETE', '/api/v1/operator/plans/startup', operator);
      assert.equal(del.status, 204);
      assert.equal(del.text, '');
      assertError(await api('GET', '/api/v1/operator/plans/startup', operator), 404, 'not_found');
      assertError(await api('DELETE', '/api/v1/operator/plans/startup', operator), 404, 'not_found');
    });
  });

  describe('operator: accounts', () => {
    test('create with role and plan; list and read without password hashes', async () => {
      const c = await api('POST', '/api/v1/operator/accounts', operator, { name: 'Carol', email: 'carol@example.com', password: 'carol-password-1', planId: 'enterprise' });
      assert.equal(c.status, 201, c.text);
      assert.equal(c.body.role, 'member');
      assert.equal(c.body.status, 'active');
      assert.equal(c.body.planId, 'enterprise');
      const defaults = await member('Dave', 'dave@example.com');
      assert.equal(defaults.planId, g.gw.config.accounts.defaultPlan);
      const list = await api('GET', '/api/v1/operator/accounts', operator);
      assert.ok(list.body.accounts.some((a: any) => a.id === c.body.id));
      const one = await api('GET', `/api/v1/operator/accounts/${c.body.id}`, operator);
      assert.equal(one.body.email, 'carol@example.com');
      assertError(await api('GET', '/api/v1/operator/accounts/nope', operator), 404, 'not_found');
    });

    test('create refusals: duplicate email 409 (any case), fields named', async () => {
      const dup = await api('POST', '/api/v1/operator/accounts', operator, { name: 'Alice again', email: 'ALICE@example.com' });
      assertError(dup, 409, 'conflict');
      assert.match(dup.body.error.message, /email/);
      assertError(await api('POST', '/api/v1/operator/accounts', operator, { name: 'No email' }), 400, 'validation_failed', 'email');
      assertError(await api('POST', '/api/v1/operator/accounts', operator, { name: 'Bad', email: 'not-an-email' }), 400, 'validation_failed', 'email');
      assertError(await api('POST', '/api/v1/operator/accounts', operator, { email: 'x@example.com' }), 400, 'validation_failed', 'name');
      assertError(await api('POST', '/api/v1/operator/accounts', operator, { name: 'X', email: 'x@example.com', password: 'short' }), 400, 'validation_failed', 'password');
      assertError(await api('POST', '/api/v1/operator/accounts', operator, { name: 'X', email: 'x@example.com', role: 'admin' }), 400, 'validation_failed', 'role');
      assertError(await api('POST', '/api/v1/operator/accounts', operator, { name: 'X', email: 'x@example.com', planId: 'platinum' }), 400, 'validation_failed', 'planId');
      assertError(await api('POST', '/api/v1/operator/accounts', operator, { name: 'X', email: 'x@example.com', status: 'active' }), 400, 'validation_failed', 'status');
    });

    test('PATCH name, email, plan and password; refusals', async () => {
      const a = await member('Erin', 'erin@example.com');
      const r = await api('PATCH', `/api/v1/operator/accounts/${a.id}`, operator, { name: 'Erin E.', email: 'erin.e@example.com', planId: 'free', password: 'erin-password-12' });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.name, 'Erin E.');
      assert.equal(r.body.email, 'erin.e@example.com');
      assert.equal(r.body.planId, 'free');
      assert.ok(Date.parse(r.body.updatedAt) >= Date.parse(a.updatedAt));
      // The new password logs in once the account may use a password here (an operator; a member's login is the
      // one 401 of every failed login, which does not say whether the password was right).
      assertError(await api('GET', '/api/v1/operator/plans', basic('erin.e@example.com', 'erin-password-12')), 401, 'unauthorized');
      assert.equal((await api('PATCH', `/api/v1/operator/accounts/${a.id}`, operator, { role: 'operator' })).status, 200);
      assert.equal((await api('GET', '/api/v1/operator/plans', basic('erin.e@example.com', 'erin-password-12'))).status, 200);
      assert.equal((await api('PATCH', `/api/v1/operator/accounts/${a.id}`, operator, { role: 'member' })).status, 200);
      assertError(await api('PATCH', `/api/v1/operator/accounts/${a.id}`, operator, { email: 'alice@example.com' }), 409, 'conflict');
      assertError(await api('PATCH', `/api/v1/operator/accounts/${a.id}`, operator, { planId: 'platinum' }), 400, 'validation_failed', 'planId');
      assertError(await api('PATCH', `/api/v1/operator/accounts/${a.id}`, operator, { password: 'short' }), 400, 'validation_failed', 'password');
      assertError(await api('PATCH', `/api/v1/operator/accounts/${a.id}`, operator, { status: 'suspended' }), 400, 'validation_failed', 'status');
      assertError(await api('PATCH', `/api/v1/operator/accounts/${a.id}`, operator, {}), 400, 'validation_failed', 'body');
      assertError(await api('PATCH', '/api/v1/operator/accounts/nope', operator, { name: 'x' }), 404, 'not_found');
    });

    test("suspend refuses the account's keys on RPC and API at once; reactivate restores them", async () => {
      const a = await member('Frank', 'frank@example.com');
      const k = await adminKey(a.id);
      assert.equal((await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, { key: k.value })).status, 200);
      const s = await api('POST', `/api/v1/operator/accounts/${a.id}/suspend`, operator);
      assert.equal(s.status, 200, s.text);
      assert.equal(s.body.status, 'suspended');
      const rpc = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, { key: k.value });
      assert.equal(rpc.status, 401);
      assert.equal(rpc.body.error.code, -32010);
      const apiRefused = await api('GET', '/api/v1/account', bearer(k.value));
      assertError(apiRefused, 401, 'unauthorized');
      assert.match(apiRefused.body.error.message, /suspended/);
      const re = await api('POST', `/api/v1/operator/accounts/${a.id}/reactivate`, operator);
      assert.equal(re.status, 200);
      assert.equal(re.body.status, 'active');
      assert.equal((await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, { key: k.value })).status, 200);
      assertError(await api('POST', '/api/v1/operator/accounts/nope/suspend', operator), 404, 'not_found');
      assertError(await api('POST', '/api/v1/operator/accounts/nope/reactivate', operator), 404, 'not_found');
    });

    test('an operator cannot suspend or demote their own account', async () => {
      const me = (await api('GET', '/api/v1/operator/accounts', operator)).body.accounts.find((a: any) => a.email === g.gw.secrets.operatorEmail);
      assertError(await api('POST', `/api/v1/operator/accounts/${me.id}/suspend`, operator), 409, 'conflict');
      assertError(await api('PATCH', `/api/v1/operator/accounts/${me.id}`, operator, { role: 'member' }), 409, 'conflict');
      assert.equal((await api('GET', '/api/v1/operator/plans', operator)).status, 200);
    });
  });

  describe('operator: keys of any account', () => {
    test("list and create an account's keys; the value only in the creation response", async () => {
      const c = await api('POST', `/api/v1/operator/accounts/${bob.id}/keys`, operator, { name: 'from operator', type: 'Dedicated' });
      assert.equal(c.status, 201, c.text);
      assert.match(c.body.value, /^ngk_/);
      assert.equal(c.body.accountId, bob.id);
      assert.equal(c.body.type, 'Dedicated');
      const list = await api('GET', `/api/v1/operator/accounts/${bob.id}/keys`, operator);
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.keys.map((k: any) => k.id).sort(), [bob.keyId, c.body.id].sort());
      assert.ok(list.body.keys.every((k: any) => !('value' in k) && !('hash' in k)));
      // Bob sees it in his own list too.
      assert.ok((await api('GET', '/api/v1/keys', bearer(bob.admin))).body.keys.some((k: any) => k.id === c.body.id));
    });

    test('refusals: unknown account 404, fields named', async () => {
      assertError(await api('GET', '/api/v1/operator/accounts/nope/keys', operator), 404, 'not_found');
      assertError(await api('POST', '/api/v1/operator/accounts/nope/keys', operator, { name: 'x' }), 404, 'not_found');
      assertError(await api('POST', `/api/v1/operator/accounts/${bob.id}/keys`, operator, { type: 'Standard' }), 400, 'validation_failed', 'name');
      assertError(await api('POST', `/api/v1/operator/accounts/${bob.id}/keys`, operator, { name: 'x', type: 'Restricted', permissions: [] }), 400, 'validation_failed', 'permissions');
    });

    test('revoke any key: the next JSON-RPC request with it is 401', async () => {
      const c = (await api('POST', `/api/v1/operator/accounts/${bob.id}/keys`, operator, { name: 'doomed' })).body;
      assert.equal((await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, { key: c.value })).status, 200);
      const r = await api('POST', `/api/v1/operator/keys/${c.id}/revoke`, operator);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.id, c.id);
      assert.ok(r.body.revokedAt);
      const refused = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, { key: c.value });
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error.data.reason, 'key_revoked');
      assertError(await api('POST', '/api/v1/operator/keys/nope/revoke', operator), 404, 'not_found');
      assertError(await api('POST', `/api/v1/operator/keys/${c.id}/revoke`, bearer(alice.admin)), 403, 'forbidden');
    });
  });

  // Last: it leaves this client's bucket empty.
  describe('bounded lists and key counts', () => {
    test("the plan says how many keys an account may have: on a 3-key plan the fourth is 409 until the plan grows", async () => {
      assert.equal((await api('POST', '/api/v1/operator/plans', operator, { id: 'three-keys', name: 'Three keys', cuPerSecond: 100, cuPerMonth: 1000, maxKeys: 3 })).status, 201);
      const m = await member('Few', 'few-keys@example.com');
      assert.equal((await api('PATCH', `/api/v1/operator/accounts/${m.id}`, operator, { planId: 'three-keys' })).status, 200);
      const admin = await adminKey(m.id);
      const made = [];
      for (let i = 0; i < 3; i++) made.push((await api('POST', '/api/v1/keys', bearer(admin.value), { name: `f${i}` })).status);
      assert.deepEqual(made, [201, 201, 409], 'the admin key and two more: three');
      assert.equal((await api('PATCH', '/api/v1/operator/plans/three-keys', operator, { maxKeys: 4 })).status, 200);
      assert.equal((await api('POST', '/api/v1/keys', bearer(admin.value), { name: 'f3' })).status, 201);
    });

    test('an account may have at most 100 keys that are not revoked; revoking one makes room', async () => {
      const m = await member('Many', 'many-keys@example.com');
      const admin = await adminKey(m.id);
      let last: Res | undefined;
      let made = 1;
      for (; made < 101; made++) {
        last = await api('POST', '/api/v1/keys', bearer(admin.value), { name: `k${made}` });
        if (last.status !== 201) break;
      }
      assert.equal(made, 100, 'the 101st key is refused');
      assertError(last!, 409, 'conflict');
      assert.match(last!.body.error.message, /already has 100 keys/);
      const first = (await api('GET', '/api/v1/keys?limit=2', bearer(admin.value))).body.keys.find((k: any) => k.id !== admin.id);
      assert.equal((await api('POST', `/api/v1/keys/${first.id}/revoke`, bearer(admin.value))).status, 200);
      assert.equal((await api('POST', '/api/v1/keys', bearer(admin.value), { name: 'after a revocation' })).status, 201);

      // The list comes in pages, oldest first; following nextCursor reads every key once.
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: Res = await api('GET', `/api/v1/keys?limit=30${cursor ? `&cursor=${cursor}` : ''}`, bearer(admin.value));
        assert.equal(page.status, 200, page.text);
        assert.ok(page.body.keys.length <= 30);
        seen.push(...page.body.keys.map((k: any) => k.id));
        cursor = page.body.nextCursor;
        pages++;
      } while (cursor);
      assert.equal(seen.length, 101, '100 made, one revoked (still listed), one more');
      assert.equal(new Set(seen).size, seen.length);
      assert.equal(pages, 4);
      assert.equal((await api('GET', '/api/v1/keys', bearer(admin.value))).body.keys.length, 100, 'a page is 100 by default');
      assert.equal((await api('GET', `/api/v1/operator/accounts/${m.id}/keys?limit=1`, operator)).body.keys.length, 1);
      assertError(await api('GET', '/api/v1/keys?limit=5000', bearer(admin.value)), 400, 'validation_failed', 'limit');
      assertError(await api('GET', '/api/v1/keys?cursor=bm9wZQ', bearer(admin.value)), 400, 'validation_failed', 'cursor');
    });
  });

  describe('changes need JSON, and no other origin is answered', () => {
    test('a change without Content-Type: application/json is 415, also without a body; nothing changed', async () => {
      const k = (await api('POST', '/api/v1/keys', bearer(alice.admin), { name: 'csrf-target' })).body;
      assertError(await api('POST', `/api/v1/keys/${k.id}/revoke`, bearer(alice.admin), undefined, { type: '' }), 415, 'bad_request');
      assertError(await api('POST', `/api/v1/keys/${k.id}/revoke`, bearer(alice.admin), undefined, { type: 'text/plain' }), 415, 'bad_request');
      assertError(await api('PATCH', `/api/v1/keys/${k.id}`, bearer(alice.admin), undefined, { raw: '{"name":"x"}', type: 'application/x-www-form-urlencoded' }), 415, 'bad_request');
      assert.equal((await api('GET', `/api/v1/keys/${k.id}`, bearer(alice.admin))).body.revokedAt, null, 'not revoked');
      assert.equal((await api('POST', `/api/v1/keys/${k.id}/revoke`, bearer(alice.admin))).status, 200, 'with the JSON content type, it goes');
    });

    test('the management API sends no Access-Control-Allow-Origin; the JSON-RPC endpoint does', async () => {
      const res = await fetch(`${g.url}/api/v1/account`, { headers: { authorization: bearer(alice.admin), origin: 'https://evil.example' } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), null);
      const rpc = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, { headers: { origin: 'https://dapp.example' } });
      assert.equal(rpc.headers.get('access-control-allow-origin'), '*');
    });
  });

  describe('guessing', () => {
    test('failed authentications are limited per IP: 429 with Retry-After; no password is checked then; a valid key still passes', async () => {
      let r: Res | undefined;
      for (let i = 0; i < 60; i++) {
        r = await api('GET', '/api/v1/account', bearer('ngk_' + String(i).padStart(43, 'G')));
        if (r.status === 429) break;
        assertError(r, 401, 'unauthorized');
      }
      assertError(r!, 429, 'too_many_requests');
      assert.ok(Number(r!.headers.get('retry-after')) >= 1);
      assertError(await api('GET', '/api/v1/operator/plans', operator), 429, 'too_many_requests');
      assert.equal((await api('GET', '/api/v1/account', bearer(alice.admin))).status, 200, 'a valid admin key from that address');
      assert.equal((await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, { key: alice.admin })).status, 200);
    });
  });
});
