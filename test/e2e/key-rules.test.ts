/**
 * Keys as hosted providers offer them, on the wire: a key that requires a JWT (viem with a signed token; each refusal
 * with its reason; the token on a WebSocket's upgrade), contract and user-agent allowlists, a key's own eth_getLogs
 * range and method denylist, a rotation's overlap, and `nodegate keys revoke` by value and by the prefix shown.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SignJWT } from 'jose';
import { createPublicClient, http } from 'viem';
import WebSocket from 'ws';
import type { NewKeyInput } from '../../src/accounts/service.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { cliCommand, freePort } from '../helpers/process.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const A = '0x' + '11'.repeat(20);
const B = '0x' + '22'.repeat(20);
const AUD = 'https://rpc.example';

describe('keys as hosted providers offer them', () => {
  let g: TestGateway;
  let accountId: string;
  let admin: string;
  before(async () => {
    g = await startTestGateway();
    accountId = (await g.gw.accounts.createAccount({ name: 'Rules', email: 'rules@example.com' })).id;
    admin = (await g.gw.accounts.createKey(accountId, { name: 'admin', type: 'Restricted', permissions: ['admin'] })).value;
  });
  after(async () => { await g?.close(); });

  const newKey = async (input: Partial<NewKeyInput>) => g.gw.accounts.createKey(accountId, { name: 'k', ...input } as NewKeyInput);
  const call = (method: string, params: unknown[] = []) => ({ jsonrpc: '2.0', id: 1, method, params });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${g.url}/api/v1${path}`, {
      method, headers: { authorization: `Bearer ${admin}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json() as any };
  };
  const refusal = (r: { status: number; body: any }) => `${r.status} ${r.body.error.code} ${r.body.error.data?.reason}: ${r.body.error.message}`;

  describe('a key that requires a JWT', () => {
    const signer = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    let value: string;
    const token = (claims: Record<string, unknown>, key = signer.privateKey) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'app' }).sign(key);
    const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

    before(async () => {
      ({ value } = await newKey({ jwtKeys: [{ id: 'app', pem: signer.publicKey.export({ type: 'spki', format: 'pem' }).toString() }], jwtAudiences: [AUD] }));
    });

    test('viem with a signed token in Authorization works', async () => {
      const jwt = await token({ exp: inAnHour(), aud: AUD });
      const client = createPublicClient({ transport: http(`${g.url}/v1/mainnet/${value}`, { fetchOptions: { headers: { authorization: `Bearer ${jwt}` } } }) });
      assert.equal(await client.getChainId(), 1);
      assert.equal(typeof (await client.getBlockNumber()), 'bigint');
    });

    test('missing, expired, wrongly signed and wrong-audience tokens get 401 with the reason', async () => {
      const send = async (authorization?: string) => refusal(await g.rpc(call('eth_chainId'), { key: value, headers: authorization ? { authorization } : {} }));
      assert.equal(await send(), '401 -32010 jwt_missing: this key requires a JWT: send it as Authorization: Bearer <token>');
      assert.equal(await send(`Bearer ${await token({ exp: Math.floor(Date.now() / 1000) - 120, aud: AUD })}`), '401 -32010 jwt_expired: the JWT has expired');
      assert.equal(await send(`Bearer ${await token({ exp: inAnHour(), aud: AUD }, stranger.privateKey)}`), '401 -32010 jwt_invalid: the JWT is not valid: bad signature');
      assert.equal(await send(`Bearer ${await token({ exp: inAnHour(), aud: 'https://elsewhere.example' })}`), '401 -32010 jwt_audience: the JWT is not for this key: its aud is none the key accepts');
      assert.equal(await send(`Bearer ${await token({ aud: AUD })}`), '401 -32010 jwt_invalid: the JWT is not valid: it has no exp');
    });

    test('over WebSocket the token rides on the upgrade: none is a 401 before any socket, a good one opens it', async () => {
      const url = `${g.url.replace('http', 'ws')}/v1/mainnet/${value}`;
      const refused = await new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(url);
        ws.on('error', () => {}); // ended by the test on the refusal
        ws.once('unexpected-response', (_req, res) => { resolve(res.statusCode ?? 0); ws.terminate(); });
        ws.once('open', () => reject(new Error('opened without a token')));
      });
      assert.equal(refused, 401);
      const ws = new WebSocket(url, { headers: { authorization: `Bearer ${await token({ exp: inAnHour(), aud: AUD })}` } });
      await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
      const answer = new Promise<any>((resolve) => ws.once('message', (d) => resolve(JSON.parse(String(d)))));
      ws.send(JSON.stringify(call('eth_chainId')));
      assert.equal((await answer).result, '0x1');
      ws.close();
    });
  });

  test('a contract allowlist refuses eth_call to another address with -32011 naming it', async () => {
    const { value } = await newKey({ contractAllowlist: [A] });
    const ok = await g.rpc(call('eth_call', [{ to: A, data: '0x' }, 'latest']), { key: value });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.result, '0x');
    assert.equal(refusal(await g.rpc(call('eth_call', [{ to: B, data: '0x' }, 'latest']), { key: value })), `403 -32011 forbidden: forbidden: contract ${B} is not in the key's allowlist`);
    assert.equal(refusal(await g.rpc(call('eth_getLogs', [{ address: B }]), { key: value })), `403 -32011 forbidden: forbidden: contract ${B} is not in the key's allowlist`);
    assert.equal((await g.rpc(call('eth_getLogs', [{ address: A }]), { key: value })).status, 200);
  });

  test('a user-agent allowlist admits the clients it names, and refuses others naming their user agent', async () => {
    const { value } = await newKey({ userAgentAllowlist: ['my-dapp/'] });
    const ua = (agent: string) => g.rpc(call('eth_chainId'), { key: value, headers: { 'user-agent': agent } });
    assert.equal((await ua('Mozilla/5.0 My-Dapp/2.1')).status, 200);
    assert.equal(refusal(await ua('curl/8.5.0')), "403 -32011 forbidden: forbidden: user agent curl/8.5.0 is not in the key's allowlist");
  });

  test("a key's own eth_getLogs range is refused in the network bound's words; a denied method is refused", async () => {
    const { value } = await newKey({ logsMaxBlockRange: 10, methodDenylist: ['eth_sendRawTransaction'] });
    assert.equal((await g.rpc(call('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x9' }]), { key: value })).status, 200);
    const wide = await g.rpc(call('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x64' }]), { key: value });
    assert.equal(refusal(wide), '200 -32005 logs_too_many: query returned more than 10 results. Try with this block range [0x0, 0x9].');
    assert.equal(refusal(await g.rpc(call('eth_sendRawTransaction', ['0x00']), { key: value })), '403 -32011 forbidden: forbidden: method eth_sendRawTransaction is denied for this key');
    // Another key of the account is held to the network's bound only.
    assert.equal((await g.rpc(call('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x64' }]), { key: (await newKey({})).value })).status, 200);
  });

  test('a key rotated with an overlap: both values work during it, only the new one after it', async () => {
    const { key, value: old } = await newKey({});
    const rotated = await api('POST', `/keys/${key.id}/rotate`, { overlapSeconds: 2 });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    const fresh: string = rotated.body.value;
    assert.notEqual(fresh, old);
    assert.equal(rotated.body.previousPrefix, old.slice(0, 8));
    assert.equal(rotated.body.previousHash, undefined, 'hashes never leave the gateway');
    for (const v of [old, fresh]) assert.equal((await g.rpc(call('eth_chainId'), { key: v })).status, 200);
    await sleep(Date.parse(rotated.body.previousUntil) - Date.now() + 50);
    // Refused by the cached resolution's clock ("the key was rotated"), or as no key's once looked up afresh.
    assert.match(refusal(await g.rpc(call('eth_chainId'), { key: old })), /^401 -32010 invalid_key: invalid API key(: the key was rotated: this value no longer works)?$/);
    assert.equal((await g.rpc(call('eth_chainId'), { key: fresh })).status, 200);
  });

  test('the management API revokes by value or prefix; a prefix of several keys is refused, naming them', async () => {
    const { key, value } = await newKey({});
    assert.equal((await api('POST', '/keys/revoke', { key: 'ngk_' })).status, 400);
    const byValue = await api('POST', '/keys/revoke', { key: value });
    assert.deepEqual([byValue.status, byValue.body.outcome, byValue.body.key.id], [200, 'revoked', key.id]);
    assert.equal(refusal(await g.rpc(call('eth_chainId'), { key: value })), '401 -32010 key_revoked: API key revoked');
    const second = await newKey({});
    const byPrefix = await api('POST', '/keys/revoke', { key: `${second.key.prefix}…` });
    assert.deepEqual([byPrefix.status, byPrefix.body.outcome], [200, 'revoked']);
    // A prefix several keys share: nothing revoked, the keys named.
    const twins = [await newKey({ name: 'twin-a' }), await newKey({ name: 'twin-b' })];
    await g.gw.store.keys.rotateKey(twins[1].key.id, { prefix: twins[0].key.prefix, hash: twins[1].key.hash.replace(/^./, 'f'), previousUntil: null });
    const several = await api('POST', '/keys/revoke', { key: twins[0].key.prefix });
    assert.equal(several.status, 409);
    // Both named, oldest first; two keys made in the same millisecond come in either order.
    const named = twins.map((t) => `${t.key.id} \\(${t.key.name}, ngk_[^)]*\\)`);
    assert.match(several.body.error.message, new RegExp(`^the prefix is 2 keys': (${named[0]}; ${named[1]}|${named[1]}; ${named[0]}); revoke one by its id$`));
    assert.equal((await g.rpc(call('eth_chainId'), { key: twins[0].value })).status, 200);
  });
});

describe('nodegate keys revoke on a running gateway', () => {
  let g: TestGateway;
  before(async () => { g = await startTestGateway(); });
  after(async () => { await g?.close(); });

  /** `nodegate ARGS` on the gateway's own store, as its operator runs it beside it. */
  const cli = async (args: string[]) => {
    const env = { ...process.env, NODEGATE_DATA_DIR: g.dataDir, NODEGATE_PORT: String(await freePort()), NODEGATE_CONFIG: undefined, DATABASE_URL: undefined };
    const child = spawn(process.execPath, [...cliCommand(), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => { out += s; });
    child.stderr.setEncoding('utf8').on('data', (s: string) => { out += s; });
    const code = await new Promise<number>((resolve) => child.once('close', (c) => resolve(c ?? -1)));
    return { code, out };
  };
  const status = async (value: string) => (await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }, { key: value })).status;
  /** Within a second, as a change made by the CLI reaches the gateway (auth.keyCacheTtlMs). */
  const refusedSoon = async (value: string) => {
    const t0 = Date.now();
    while ((await status(value)) !== 401) {
      assert.ok(Date.now() - t0 < 1500, 'refused within a second');
      await sleep(50);
    }
    return Date.now() - t0;
  };

  test('accepts the value a client holds and the prefix the lists show', async () => {
    const accountId = (await g.gw.accounts.createAccount({ name: 'Cli', email: 'cli-revoke@example.com' })).id;
    const byValue = await g.gw.accounts.createKey(accountId, { name: 'by-value' });
    const byPrefix = await g.gw.accounts.createKey(accountId, { name: 'by-prefix' });
    for (const k of [byValue, byPrefix]) assert.equal(await status(k.value), 200);
    const r1 = await cli(['keys', 'revoke', byValue.value]);
    assert.equal(r1.code, 0, r1.out);
    assert.match(r1.out, /Revoked key by-value/);
    assert.ok(!r1.out.includes(byValue.value), 'the value is not printed back');
    await refusedSoon(byValue.value);
    const r2 = await cli(['keys', 'revoke', `${byPrefix.key.prefix}…`]);
    assert.equal(r2.code, 0, r2.out);
    assert.match(r2.out, /Revoked key by-prefix/);
    await refusedSoon(byPrefix.value);
    // A prefix two keys share: both listed, neither revoked.
    const twins = [await g.gw.accounts.createKey(accountId, { name: 'twin-a' }), await g.gw.accounts.createKey(accountId, { name: 'twin-b' })];
    await g.gw.store.keys.rotateKey(twins[1].key.id, { prefix: twins[0].key.prefix, hash: twins[1].key.hash.replace(/^./, 'f'), previousUntil: null });
    const r3 = await cli(['keys', 'revoke', twins[0].key.prefix]);
    assert.equal(r3.code, 2, r3.out);
    assert.match(r3.out, /is the prefix of 2 keys; nothing was revoked/);
    for (const t of twins) assert.match(r3.out, new RegExp(`${t.key.id}\\s+${t.key.name}`));
    assert.equal(await status(twins[0].value), 200);
  });

  test('refuses an IP allowlist naming every wrong entry, an address cut short among them', async () => {
    const both = await cli(['keys', 'create', '--name', 'ips', '--account', 'cli-revoke@example.com', '--ip', '10.0.0.0/33,not-an-ip,192.0.2.1']);
    assert.equal(both.code, 2, both.out);
    assert.match(both.out, /--ip: not IP addresses or CIDRs: 10\.0\.0\.0\/33, not-an-ip/);
    const short = await cli(['keys', 'create', '--name', 'ips', '--account', 'cli-revoke@example.com', '--ip', '1.2.3']);
    assert.equal(short.code, 2, short.out);
    assert.match(short.out, /--ip: not an IP address or CIDR: 1\.2\.3/);
  });
});
