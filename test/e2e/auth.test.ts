import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { NewKeyInput } from '../../src/accounts/service.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * The authorization matrix on the wire (docs/decisions.md §6): for each key type and permission set, each allowlist kind,
 * expiry, revocation and suspension, the exact HTTP status, code and reason.
 */
describe('who may call the JSON-RPC endpoint', () => {
  let g: TestGateway;
  let proxied: TestGateway;
  let accountId: string;

  before(async () => {
    g = await startTestGateway();
    // A second gateway behind a trusted proxy (127.0.0.1): X-Forwarded-For then names the client.
    proxied = await startTestGateway({ server: { trustedProxies: ['127.0.0.1'] }, networks: { mainnet: { chainId: 1 } } });
    accountId = (await g.gw.accounts.createAccount({ name: 'Matrix', email: 'matrix@example.com' })).id;
  });
  after(async () => {
    await g?.close();
    await proxied?.close();
  });

  const chainId = { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] };
  const newKey = async (input: Partial<NewKeyInput>, on = g, account = accountId) =>
    (await on.gw.accounts.createKey(account, { name: 'k', ...input } as NewKeyInput));

  const expectOk = async (value: string, opts: Parameters<TestGateway['rpc']>[1] = {}, on = g) => {
    const r = await on.rpc(chainId, { ...opts, key: value });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.result, '0x1');
    return r;
  };
  const expectError = async (value: string, status: number, code: number, message: string, opts: Parameters<TestGateway['rpc']>[1] = {}, on = g, body: unknown = chainId) => {
    const r = await on.rpc(body, { ...opts, key: value });
    assert.equal(r.status, status, r.text);
    // Refused before its body is read: a request-level refusal cannot know the id (JSON-RPC 2.0: null);
    // an item's refusal (method allowlist, debug methods) answers with its id.
    assert.equal(r.body.id, status === 403 && /method|debug/.test(message) ? 1 : null);
    assert.equal(r.body.error.code, code);
    assert.equal(r.body.error.message, message);
    assert.ok(!r.text.includes(value), 'the key is never echoed');
    return r;
  };

  describe('key types and permissions', () => {
    test('a Standard key carries rpc, webhooks, analytics and may call', async () => {
      const { key, value } = await newKey({ type: 'Standard' });
      assert.deepEqual(key.permissions, ['rpc', 'webhooks', 'analytics']);
      await expectOk(value);
    });
    test('a Dedicated key carries the same and may call', async () => {
      const { key, value } = await newKey({ type: 'Dedicated' });
      assert.deepEqual(key.permissions, ['rpc', 'webhooks', 'analytics']);
      await expectOk(value);
    });
    test('a Restricted key with rpc may call', async () => {
      await expectOk((await newKey({ type: 'Restricted', permissions: ['rpc'] })).value);
      await expectOk((await newKey({ type: 'Restricted', permissions: ['rpc', 'admin'] })).value);
    });
    for (const permissions of [['admin'], ['webhooks'], ['analytics'], ['webhooks', 'analytics', 'admin']] as const) {
      test(`a Restricted key with only ${permissions.join('+')} is 403: it lacks rpc`, async () => {
        const { value } = await newKey({ type: 'Restricted', permissions: [...permissions] });
        await expectError(value, 403, -32011, 'forbidden: the key lacks the rpc permission');
      });
    }
    test('a Restricted key needs a non-empty set, and admin is never implied', async () => {
      await assert.rejects(newKey({ type: 'Restricted', permissions: [] }), /permissions: a Restricted key needs a non-empty set/);
      await assert.rejects(newKey({ type: 'Standard', permissions: ['admin'] }), /permissions: only Restricted keys choose permissions/);
      await assert.rejects(newKey({ type: 'Restricted', permissions: ['root' as never] }), /unknown permission root/);
    });
  });

  describe('IP allowlists', () => {
    test('an IPv4 address: the caller 127.0.0.1 passes; another address is 403 with the caller\'s address', async () => {
      await expectOk((await newKey({ ipAllowlist: ['127.0.0.1'] })).value);
      const { value } = await newKey({ ipAllowlist: ['10.1.2.3'] });
      await expectError(value, 403, -32011, "forbidden: IP address 127.0.0.1 is not in the key's allowlist");
    });
    test('an IPv4 CIDR', async () => {
      await expectOk((await newKey({ ipAllowlist: ['127.0.0.0/8'] })).value);
      const { value } = await newKey({ ipAllowlist: ['192.168.0.0/16', '10.0.0.0/8'] });
      await expectError(value, 403, -32011, "forbidden: IP address 127.0.0.1 is not in the key's allowlist");
    });
    test('IPv6 addresses and CIDRs, the client named by a trusted proxy', async () => {
      const v6 = await newKey({ ipAllowlist: ['2001:db8::5'] }, proxied, await demoAccount(proxied));
      await expectOk(v6.value, { headers: { 'x-forwarded-for': '2001:db8::5' } }, proxied);
      await expectError(v6.value, 403, -32011, "forbidden: IP address 2001:db8::6 is not in the key's allowlist", { headers: { 'x-forwarded-for': '2001:db8::6' } }, proxied);
      const cidr = await newKey({ ipAllowlist: ['2001:db8:abcd::/48'] }, proxied, await demoAccount(proxied));
      await expectOk(cidr.value, { headers: { 'x-forwarded-for': '2001:db8:abcd:12::1' } }, proxied);
      await expectError(cidr.value, 403, -32011, "forbidden: IP address 2001:db8:abce::1 is not in the key's allowlist", { headers: { 'x-forwarded-for': '2001:db8:abce::1' } }, proxied);
      const v4 = await newKey({ ipAllowlist: ['203.0.113.0/24'] }, proxied, await demoAccount(proxied));
      await expectOk(v4.value, { headers: { 'x-forwarded-for': '203.0.113.9' } }, proxied);
    });
    test('X-Forwarded-For from a peer that is not a trusted proxy is ignored', async () => {
      const { value } = await newKey({ ipAllowlist: ['203.0.113.9'] });
      await expectError(value, 403, -32011, "forbidden: IP address 127.0.0.1 is not in the key's allowlist", { headers: { 'x-forwarded-for': '203.0.113.9' } });
    });
    test('an entry that is not an address or CIDR is refused at creation', async () => {
      await assert.rejects(newKey({ ipAllowlist: ['10.0.0.300'] }), /ipAllowlist: not an IP address or CIDR: 10.0.0.300/);
    });
  });

  describe('origin, network and method allowlists', () => {
    test('an origin allowlist admits its origins, answers CORS for them, and refuses others and none', async () => {
      const { value } = await newKey({ originAllowlist: ['https://app.example'] });
      const r = await expectOk(value, { headers: { origin: 'https://app.example' } });
      assert.equal(r.headers.get('access-control-allow-origin'), 'https://app.example');
      await expectError(value, 403, -32011, "forbidden: origin https://evil.example is not in the key's allowlist", { headers: { origin: 'https://evil.example' } });
      await expectError(value, 403, -32011, 'forbidden: the key only accepts requests from its allowed origins');
    });
    test('a network allowlist admits its networks (aliases included) and refuses others', async () => {
      const { value } = await newKey({ networkAllowlist: ['mainnet'] });
      await expectOk(value);
      await expectError(value, 403, -32011, 'forbidden: network testnet is not allowed for this key', { network: 'testnet' });
      const dev = await newKey({ networkAllowlist: ['devnet'] });
      assert.deepEqual(dev.key.networkAllowlist, ['testnet']);
      const r = await g.rpc(chainId, { network: 'devnet', key: dev.value });
      assert.equal(r.body.result, '0xaa36a7');
    });
    test('a method allowlist refuses other methods with 403, and item by item inside a batch', async () => {
      const { value } = await newKey({ methodAllowlist: ['eth_chainId'] });
      await expectOk(value);
      await expectError(value, 403, -32011, 'forbidden: method eth_blockNumber is not allowed for this key', {}, g, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' });
      const b = await g.rpc([chainId, { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber' }], { key: value });
      assert.equal(b.status, 200);
      assert.equal(b.body[0].result, '0x1');
      assert.equal(b.body[1].error.code, -32011);
      await assert.rejects(newKey({ methodAllowlist: ['anvil_setBalance'] }), /methodAllowlist: not an allowed method: anvil_setBalance/);
    });
  });

  describe('plans', () => {
    test('debug_* on a plan without debug methods is 403; the same key may call the rest', async () => {
      const free = await g.gw.accounts.createAccount({ name: 'Free', email: 'free@example.com', planId: 'free' });
      const { value } = await newKey({}, g, free.id);
      await expectOk(value);
      const call = { jsonrpc: '2.0', id: 1, method: 'debug_traceCall', params: [{ to: '0x0000000000000000000000000000000000000001' }, 'latest'] };
      await expectError(value, 403, -32011, 'forbidden: debug methods are not included in the Free plan', {}, g, call);
    });
    test("a batch larger than the plan's maximum is one -32600 error", async () => {
      await g.gw.accounts.createPlan({ id: 'tiny', name: 'Tiny', cuPerSecond: 100, cuPerMonth: 1000000, maxBatchSize: 2, debugMethods: false, maxFilters: 1 });
      const acct = await g.gw.accounts.createAccount({ name: 'Tiny', email: 'tiny@example.com', planId: 'tiny' });
      const { value } = await newKey({}, g, acct.id);
      const r = await g.rpc([chainId, chainId, chainId], { key: value });
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, -32600);
      assert.equal(r.body.error.message, 'Invalid Request: batch of 3 requests exceeds the limit of 2 of the Tiny plan');
      assert.equal((await g.rpc([chainId, chainId], { key: value })).status, 200);
    });
  });

  describe('expiry, revocation, suspension', () => {
    test('an expired key is 401 and says so', async () => {
      await assert.rejects(newKey({ expiresAt: new Date(Date.now() - 1000).toISOString() }), /expiresAt: is in the past/, 'no key is made already expired');
      const { key, value } = await newKey({});
      await g.gw.accounts.updateKey(key.id, { expiresAt: new Date(Date.now() - 1000).toISOString() });
      await expectError(value, 401, -32010, 'invalid API key: the key has expired');
      const later = await newKey({ expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
      await expectOk(later.value);
    });
    test('a revoked key is refused on the very next request', async () => {
      const { key, value } = await newKey({});
      await expectOk(value);
      await g.gw.accounts.revokeKey(key.id);
      await expectError(value, 401, -32010, 'API key revoked');
    });
    test("a suspended account's keys are 401 until it is reactivated", async () => {
      const acct = await g.gw.accounts.createAccount({ name: 'Sus', email: 'sus@example.com' });
      const { value } = await newKey({}, g, acct.id);
      await expectOk(value);
      await g.gw.accounts.suspendAccount(acct.id);
      await expectError(value, 401, -32010, 'invalid API key: the account is suspended');
      await g.gw.accounts.reactivateAccount(acct.id);
      await expectOk(value);
    });
    test('an unknown key and a malformed key are 401 invalid API key', async () => {
      await expectError('ngk_' + 'q'.repeat(43), 401, -32010, 'invalid API key');
      await expectError('hello', 401, -32010, 'invalid API key');
    });
  });
});

async function demoAccount(g: TestGateway): Promise<string> {
  return (await g.gw.store.accounts.getAccountByEmail('demo@localhost'))!.id;
}
