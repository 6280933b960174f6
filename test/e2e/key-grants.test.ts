/**
 * Who may give a key which permission, through the wire: a developer makes keys of at most its own permissions, an
 * admin key is the owner's to make, and only an operator in person makes a key that reaches the operator's routes.
 * A member's keys are listed with their maker and stop working when the member is removed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

interface Res { status: number; body: any; cookie?: string }
interface Session { cookie: string; csrf: string }

describe('key permissions are given only by those who hold them', { timeout: 120_000 }, () => {
  let g: TestGateway;
  let owner: Session;
  let developer: Session & { id: string };
  let operatorId: string;
  let demoId: string;
  const operator = () => `Basic ${Buffer.from(`${g.gw.secrets.operatorEmail}:${g.gw.secrets.operatorPassword}`).toString('base64')}`;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
    const res = await fetch(g.url + path, {
      method, headers: { ...(method !== 'GET' ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? (method !== 'GET' ? '' : undefined) : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, cookie: res.headers.getSetCookie()[0]?.split(';')[0] };
  }
  const as = (s: Session, method: string, path: string, body?: unknown) =>
    call(method, path, body, { cookie: s.cookie, ...(method !== 'GET' ? { 'x-csrf-token': s.csrf } : {}) });
  const tokenOf = (url: string) => new URL(url.replace('#/', '')).searchParams.get('token')!;
  async function join(email: string, role: 'developer' | 'viewer' | 'owner'): Promise<Session & { id: string }> {
    const invited = await as(owner, 'POST', '/api/v1/account/invitations', { email, role });
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    const r = await call('POST', '/api/v1/invitations/accept', { token: tokenOf(invited.body.url), name: email.split('@')[0], password: `password of ${email}` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return { cookie: r.cookie!, csrf: r.body.csrfToken, id: r.body.member.id };
  }

  before(async () => {
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } } });
    const r = await call('POST', '/api/v1/session', { email: 'demo@localhost', password: g.gw.secrets.demoPassword });
    owner = { cookie: r.cookie!, csrf: r.body.csrfToken };
    demoId = r.body.account.id;
    developer = await join('dev@example.com', 'developer');
    const accounts = (await call('GET', '/api/v1/operator/accounts', undefined, { authorization: operator() })).body.accounts;
    operatorId = accounts.find((a: any) => a.role === 'operator').id;
  });
  after(async () => g?.close());

  test('a developer gets 403 making an admin key, and makes keys of its own permissions, listed as made by it', async () => {
    const admin = await as(developer, 'POST', '/api/v1/keys', { name: 'escalate', type: 'Restricted', permissions: ['rpc', 'admin'] });
    assert.equal(admin.status, 403, JSON.stringify(admin.body));
    assert.match(admin.body.error.message, /developer cannot grant admin/);
    const mine = await as(developer, 'POST', '/api/v1/keys', { name: 'app', type: 'Restricted', permissions: ['rpc', 'analytics'] });
    assert.equal(mine.status, 201, JSON.stringify(mine.body));
    assert.equal(mine.body.createdBy, developer.id);
    assert.equal((await as(developer, 'POST', '/api/v1/keys', { name: 'standard' })).status, 201);
    const listed = (await as(owner, 'GET', '/api/v1/keys')).body.keys.find((k: any) => k.id === mine.body.id);
    assert.equal(listed.createdBy, developer.id);
  });

  test("a developer cannot change an owner's admin key (its allowlists would be the developer's to loosen)", async () => {
    const admin = await as(owner, 'POST', '/api/v1/keys', { name: 'owner admin', type: 'Restricted', permissions: ['admin'], ipAllowlist: ['10.0.0.0/8'] });
    assert.equal(admin.status, 201, JSON.stringify(admin.body));
    assert.equal(admin.body.createdBy, null);
    const r = await as(developer, 'PATCH', `/api/v1/keys/${admin.body.id}`, { ipAllowlist: [] });
    assert.equal(r.status, 403, JSON.stringify(r.body));
    assert.equal((await as(owner, 'PATCH', `/api/v1/keys/${admin.body.id}`, { ipAllowlist: [] })).status, 200);
  });

  test("no operator route answers a tenant's admin key, nor an admin key of the operator's own account", async () => {
    const tenant = await as(owner, 'POST', '/api/v1/keys', { name: 'tenant admin', type: 'Restricted', permissions: ['admin'] });
    const ownAdmin = await call('POST', `/api/v1/operator/accounts/${operatorId}/keys`, { name: 'ops admin', type: 'Restricted', permissions: ['admin'] }, { authorization: operator() });
    assert.equal(ownAdmin.status, 201, JSON.stringify(ownAdmin.body));
    for (const key of [tenant.body.value, ownAdmin.body.value]) {
      assert.equal((await call('GET', '/api/v1/operator/accounts', undefined, bearer(key))).status, 403);
      assert.equal((await call('POST', `/api/v1/operator/accounts/${demoId}/suspend`, undefined, bearer(key))).status, 403);
      assert.equal((await call('GET', '/api/v1/operator/analytics', undefined, bearer(key))).status, 403);
    }
    assert.equal((await call('GET', '/api/v1/account', undefined, { cookie: owner.cookie })).body.status, 'active', 'the tenant was not suspended');
    // Nor can that admin key make itself an operator: no operator key, no owner of the operator's account.
    assert.equal((await call('POST', '/api/v1/keys', { name: 'mint', type: 'Restricted', permissions: ['operator'] }, bearer(ownAdmin.body.value))).status, 403);
    assert.equal((await call('POST', '/api/v1/account/invitations', { email: 'mallory@example.com', role: 'owner' }, bearer(ownAdmin.body.value))).status, 403);
  });

  test('the operator in person makes an operator key, which answers on operator routes; a tenant never holds one', async () => {
    const op = await call('POST', `/api/v1/operator/accounts/${operatorId}/keys`, { name: 'ops', type: 'Restricted', permissions: ['operator'] }, { authorization: operator() });
    assert.equal(op.status, 201, JSON.stringify(op.body));
    assert.equal((await call('GET', '/api/v1/operator/accounts', undefined, bearer(op.body.value))).status, 200);
    assert.equal((await call('GET', '/api/v1/keys', undefined, bearer(op.body.value))).status, 403, 'operator is not admin of the account');
    // An operator key cannot make another operator key: only a person grants it.
    const byKey = await call('POST', `/api/v1/operator/accounts/${operatorId}/keys`, { name: 'ops 2', type: 'Restricted', permissions: ['operator'] }, bearer(op.body.value));
    assert.equal(byKey.status, 403, JSON.stringify(byKey.body));
    const tenant = await call('POST', `/api/v1/operator/accounts/${demoId}/keys`, { name: 'x', type: 'Restricted', permissions: ['operator'] }, { authorization: operator() });
    assert.equal(tenant.status, 400, JSON.stringify(tenant.body));
    // Nor does it make operators any other way: an operator account, a promotion, an owner of the operator's account.
    const opKey = bearer(op.body.value);
    assert.equal((await call('POST', '/api/v1/operator/accounts', { name: 'Op 2', email: 'op2@example.com', role: 'operator' }, opKey)).status, 403);
    assert.equal((await call('PATCH', `/api/v1/operator/accounts/${demoId}`, { role: 'operator' }, opKey)).status, 403);
    assert.equal((await call('POST', `/api/v1/operator/accounts/${operatorId}/invitations`, { email: 'op3@example.com', role: 'owner' }, opKey)).status, 403);
    assert.equal((await call('POST', `/api/v1/operator/accounts/${demoId}/invitations`, { email: 'tenant-viewer@example.com', role: 'viewer' }, opKey)).status, 201);
  });

  test('the keys a removed developer made stop working (401)', async () => {
    const leaver = await join('leaver@example.com', 'developer');
    const made = await as(leaver, 'POST', '/api/v1/keys', { name: 'leaver app', type: 'Restricted', permissions: ['rpc', 'analytics'] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const before = await call('GET', '/api/v1/analytics', undefined, bearer(made.body.value));
    assert.notEqual(before.status, 401, JSON.stringify(before.body));
    assert.notEqual((await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, { key: made.body.value })).status, 401);
    assert.equal((await as(owner, 'DELETE', `/api/v1/account/members/${leaver.id}`)).status, 204);
    assert.equal((await call('GET', '/api/v1/analytics', undefined, bearer(made.body.value))).status, 401);
    assert.equal((await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, { key: made.body.value })).status, 401);
    const listed = (await as(owner, 'GET', '/api/v1/keys')).body.keys.find((k: any) => k.id === made.body.id);
    assert.ok(listed.revokedAt, 'listed as revoked, with its maker');
    assert.equal(listed.createdBy, leaver.id);
  });

  test('an owner member lowered to developer loses the admin keys they made; their developer-grade keys stay', async () => {
    const lead = await join('lead@example.com', 'owner');
    const admin = await as(lead, 'POST', '/api/v1/keys', { name: 'lead admin', type: 'Restricted', permissions: ['admin'] });
    assert.equal(admin.status, 201, JSON.stringify(admin.body));
    const app = await as(lead, 'POST', '/api/v1/keys', { name: 'lead app' });
    assert.equal((await call('GET', '/api/v1/keys', undefined, bearer(admin.body.value))).status, 200);
    assert.equal((await as(owner, 'PATCH', `/api/v1/account/members/${lead.id}`, { role: 'developer' })).status, 200);
    assert.equal((await call('GET', '/api/v1/keys', undefined, bearer(admin.body.value))).status, 401);
    assert.notEqual((await call('GET', '/api/v1/analytics', undefined, bearer(app.body.value))).status, 401);
  });
});
