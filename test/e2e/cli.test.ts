/**
 * `nodegate plans|accounts|keys` as an operator runs them: the real CLI in child processes on one data directory,
 * checking what it prints, its exit status, and what its changes do to a gateway running on the same store.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { sqliteStores } from '../../src/store/open-store.ts';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { cliCommand, freePort } from '../helpers/process.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const CLI = cliCommand();

interface Run { code: number; stdout: string; stderr: string }

let dataDir: string;
/** A port nothing listens on: the CLI looks there for a running gateway (store-guard.ts), and 8545 may be in use. */
let port: string;

/** Runs `nodegate ARGS` on the test's data directory (SQLite; no configuration file unless given). */
function cli(args: string[], opts: { input?: string; env?: Record<string, string | undefined> } = {}): Promise<Run> {
  const env = { ...process.env, NODEGATE_DATA_DIR: dataDir, NODEGATE_PORT: port, NODEGATE_CONFIG: undefined, DATABASE_URL: undefined, ...opts.env };
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
  child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
  child.stdin.end(opts.input ?? '');
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Runs a command with `--json` that must succeed, and parses what it printed. */
async function json(args: string[], opts?: Parameters<typeof cli>[1]): Promise<any> {
  const r = await cli([...args, '--json'], opts);
  assert.equal(r.code, 0, `nodegate ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Asserts a refusal: the exit status and a stderr naming what was wrong. */
async function refused(args: string[], code: number, stderr: RegExp, opts?: Parameters<typeof cli>[1]): Promise<void> {
  const r = await cli(args, opts);
  assert.equal(r.code, code, `nodegate ${args.join(' ')}: exit ${r.code}, stderr ${r.stderr}`);
  assert.match(r.stderr, stderr);
  assert.equal(r.stdout, '');
}

const firstKey = (out: string) => /\b(ngk_[0-9A-Za-z]+)\b/.exec(out)?.[1];

describe('nodegate plans|accounts|keys on the local store', () => {
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'nodegate-cli-'));
    port = String(await freePort());
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('plans list on a fresh data directory shows the configured plans', async () => {
    const { plans } = await json(['plans', 'list']);
    assert.deepEqual(plans.map((p: { id: string }) => p.id).sort(), ['developer', 'enterprise', 'free', 'growth']);
    assert.equal(plans.find((p: { id: string }) => p.id === 'growth').cuPerSecond, 660);
  });

  test('usage show: what the gateway flushed, by method, for one account or all', async () => {
    await json(['plans', 'list']); // the store exists, with the configured plans
    const store = sqliteStores(join(dataDir, 'nodegate.db'));
    const acct = await store.accounts.createAccount({ id: '7d0c6a52-1b1e-4c3e-9a55-3a3f0e0e0c11', name: 'U', email: 'usage@example.com', passwordHash: null, status: 'active', role: 'member', planId: 'free' });
    const minute = new Date().toISOString().slice(0, 16);
    const row = { minute, accountId: acct.id, keyId: 'key-cli', network: 'mainnet', computeUnits: 10, latencyMsSum: 4, latency: [2, 0, 0, 0, 0, 0] };
    await store.usage.addUsageMinutes([{ ...row, method: 'eth_call', code: 0, requests: 2 }, { ...row, method: 'eth_getLogs', code: -32005, requests: 1, computeUnits: 0 }]);
    await store.close();
    const all = await json(['usage', 'show']);
    assert.deepEqual([all.totals.requests, all.totals.errors, all.totals.computeUnits], [3, 1, 10]);
    assert.deepEqual(all.byMethod.map((m: { method: string; requests: number }) => [m.method, m.requests]), [['eth_call', 2], ['eth_getLogs', 1]]);
    assert.equal((await json(['usage', 'show', '--account', 'USAGE@example.com'])).totals.requests, 3);
    assert.equal((await json(['usage', 'show', '--account', acct.id])).quota.used, 0);
    // An account that does not exist is said so, with a failing exit, never a report of zeros.
    await refused(['usage', 'show', '--account', 'nobody@example.com'], 1, /account nobody@example.com not found/);
    assert.deepEqual([(await json(['usage', 'show', '--status', 'error'])).totals.requests, (await json(['usage', 'show', '--method', 'eth_call'])).totals.requests], [1, 2]);
    const text = await cli(['usage', 'show', '--hours', '2']);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /eth_call\s+2\s+10\s+0/);
  });

  test('webhooks list and deliveries: what the store holds, never the secret', async () => {
    await json(['plans', 'list']); // the store exists, with the configured plans
    const store = sqliteStores(join(dataDir, 'nodegate.db'));
    const acct = (await store.accounts.listAccounts())[0] ?? (await store.accounts.createAccount({ id: 'acc-wh', name: 'W', email: 'w@example.com', passwordHash: null, status: 'active', role: 'member', planId: 'free' }));
    await store.webhooks.createWebhook({ id: 'wh-cli', accountId: acct.id, network: 'mainnet', kind: 'block.mined', url: 'https://hooks.example.com/x', options: {}, secret: 'whsec_never_shown', status: 'active' });
    await store.webhookEvents.addWebhookEvents([{ id: 'evt-cli', webhookId: 'wh-cli', type: 'block.mined', body: '{}', createdAt: new Date().toISOString() }]);
    await store.close();
    const list = await cli(['webhooks', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /wh-cli .*mainnet .*block\.mined .*https:\/\/hooks\.example\.com\/x .*active/);
    assert.doesNotMatch(list.stdout + JSON.stringify(await json(['webhooks', 'list'])), /whsec_never_shown/);
    assert.deepEqual((await json(['webhooks', 'deliveries', 'wh-cli'])).deliveries.map((e: { id: string; status: string }) => [e.id, e.status]), [['evt-cli', 'pending']]);
    assert.equal((await cli(['webhooks', 'deliveries', 'nope'])).code, 1);
  });

  test('plans create, update, show and delete; refusals name the flag', async () => {
    const pro = await json(['plans', 'create', '--id', 'pro', '--name', 'Pro', '--cu-per-second', '1000', '--cu-per-month', '5_000_000', '--debug-methods']);
    assert.deepEqual({ ...pro, createdAt: undefined, updatedAt: undefined }, {
      id: 'pro', name: 'Pro', cuPerSecond: 1000, cuPerMonth: 5_000_000, maxBatchSize: 100, debugMethods: true, maxFilters: 100, maxKeys: 100, maxWebhooks: 20, subscriptionsPerKey: 100, subscriptionsPerAccount: 500, requestLogHours: 24, requestLogMax: 10000, createdAt: undefined, updatedAt: undefined,
    });
    await Promise.all([
      refused(['plans', 'create', '--id', 'pro', '--name', 'Again', '--cu-per-second', '1', '--cu-per-month', '1'], 1, /plan "pro" already exists/),
      refused(['plans', 'create', '--id', 'x', '--name', 'X', '--cu-per-second', '0', '--cu-per-month', '1'], 2, /--cu-per-second: must be an integer of at least 1/),
    ]);
    await Promise.all([
      refused(['plans', 'create', '--id', 'x', '--name', 'X', '--cu-per-second', '1'], 2, /--cu-per-month: required/),
      refused(['plans', 'delete', 'free'], 1, /plan "free" is in the configuration \(plans\.free\)/),
    ]);
    const updated = await json(['plans', 'update', 'pro', '--max-batch-size', '500', '--no-debug-methods']);
    assert.equal(updated.maxBatchSize, 500);
    assert.equal(updated.debugMethods, false);
    const shown = await cli(['plans', 'show', 'pro']);
    assert.match(shown.stdout, /max batch size:\s+500\n/);
    assert.match(shown.stdout, /debug methods:\s+not included\n/);

    await json(['plans', 'create', '--id', 'tmp', '--name', 'Tmp', '--cu-per-second', '1', '--cu-per-month', '1']);
    assert.deepEqual(await json(['plans', 'delete', 'tmp']), { deleted: 'tmp' });
    await refused(['plans', 'show', 'tmp'], 1, /plan tmp not found/);
  });

  let ann: { id: string; email: string };

  test('accounts create, list, show and update; refusals name the flag', async () => {
    await Promise.all([
      refused(['accounts', 'create', '--name', 'Ann', '--email', 'ann@example.com', '--plan', 'nope'], 2, /--plan: no plan nope/),
      refused(['accounts', 'create', '--name', 'Ann', '--email', 'ann@example.com', '--role', 'admin'], 2, /--role: one of operator, member/),
    ]);
    ann = await json(['accounts', 'create', '--name', 'Ann', '--email', 'ann@example.com', '--plan', 'pro', '--password-stdin'], { input: 'correct horse battery staple\n' });
    assert.equal(ann.email, 'ann@example.com');
    assert.equal((ann as any).planId, 'pro');
    assert.equal((ann as any).role, 'member');
    assert.ok(!('passwordHash' in ann), 'the password hash is never printed');

    await Promise.all([
      refused(['accounts', 'create', '--name', 'Other Ann', '--email', 'ANN@example.com'], 1, /an account with email ANN@example\.com already exists/),
      refused(['accounts', 'create', '--name', 'Bob', '--email', 'bob@example.com', '--password', 'short'], 2, /--password: must be at least 12 characters/),
    ]);
    await Promise.all([
      refused(['plans', 'delete', 'pro'], 1, /plan "pro" is in use by an account/),
      refused(['accounts', 'show', 'nobody@example.com'], 1, /account nobody@example\.com not found/),
    ]);

    const updated = await json(['accounts', 'update', 'ANN@example.com', '--name', 'Ann B', '--plan', 'growth']);
    assert.equal(updated.name, 'Ann B');
    assert.equal(updated.planId, 'growth');
    const list = await cli(['accounts', 'list']);
    assert.match(list.stdout, new RegExp(`^${ann.id}\\s+ann@example\\.com\\s+Ann B\\s+member\\s+active\\s+growth`, 'm'));
    assert.doesNotMatch(list.stdout, /scrypt/);
    const shown = await cli(['accounts', 'show', ann.id]);
    assert.match(shown.stdout, /plan:\s+growth\n/);
    assert.match(shown.stdout, /dashboard login:\s+yes/);
  });

  test('keys create, list, show, update and revoke; the value is printed once, at creation', async () => {
    await Promise.all([
      refused(['keys', 'create', '--name', 'r', '--account', ann.email, '--type', 'Restricted'], 2, /--permissions: a Restricted key needs a non-empty set/),
      refused(['keys', 'create', '--name', 'r', '--account', ann.email, '--ip', '10.0.0.0/8,1.2.3.999'], 2, /--ip: not an IP address or CIDR: 1\.2\.3\.999/),
      refused(['keys', 'revoke', '00000000-0000-4000-8000-000000000000'], 1, /key 00000000-0000-4000-8000-000000000000 not found/),
    ]);

    const { value, ...key } = await json([
      'keys', 'create', '--name', 'indexer', '--account', ann.email, '--type', 'Restricted', '--permissions', 'rpc,admin',
      '--ip', '10.0.0.0/8,::1', '--origin', 'https://a.example/', '--network', 'devnet', '--method', 'eth_call,eth_getLogs', '--expires', '2030-01-01',
    ]);
    assert.match(value, /^ngk_[0-9A-Za-z]{43}$/);
    assert.equal(key.accountId, ann.id);
    assert.deepEqual(key.permissions, ['rpc', 'admin']);
    assert.deepEqual(key.originAllowlist, ['https://a.example'], 'stored as an origin');
    assert.deepEqual(key.networkAllowlist, ['testnet'], 'an alias is stored as its network');
    assert.equal(key.expiresAt, '2030-01-01T00:00:00.000Z');
    assert.ok(!('hash' in key));

    const [listed, shown] = await Promise.all([
      cli(['keys', 'list', '--account', ann.id, '--json']),
      cli(['keys', 'show', key.id]),
      refused(['keys', 'update', key.id, '--expires', '2031-01-01', '--no-expiry'], 2, /--expires and --no-expiry: give one/),
    ]);
    const { keys } = JSON.parse(listed.stdout);
    assert.deepEqual(keys.map((k: { id: string }) => k.id), [key.id]);
    assert.equal(keys[0].prefix, value.slice(0, 8));
    assert.ok(!listed.stdout.includes(value) && !listed.stdout.includes('hash'), 'lists never show the key or its hash');
    assert.match(shown.stdout, /IP allowlist:\s+10\.0\.0\.0\/8, ::1\n/);
    assert.match(shown.stdout, new RegExp(`prefix:\\s+${value.slice(0, 8)}`));
    assert.ok(!shown.stdout.includes(value));

    const updated = await json(['keys', 'update', key.id, '--name', 'renamed', '--ip', '', '--no-expiry']);
    assert.equal(updated.name, 'renamed');
    assert.deepEqual(updated.ipAllowlist, []);
    assert.equal(updated.expiresAt, null);
    assert.deepEqual(updated.methodAllowlist, ['eth_call', 'eth_getLogs'], 'what is not given stays');

    const revoked = await json(['keys', 'revoke', key.id]);
    assert.ok(revoked.revokedAt);
    assert.match((await cli(['keys', 'list', '--account', ann.email])).stdout, /renamed\s+Restricted\s+ngk_\w{4}…\s+revoked/);
  });

  test('keys create --name without --account makes the demo account if missing and prints the key first, with a curl line', async () => {
    const r = await cli(['keys', 'create', '--name', 'first']);
    assert.equal(r.code, 0, r.stderr);
    const value = firstKey(r.stdout)!;
    assert.match(r.stdout, /^API key created\. It is shown this once; only its hash is stored:\n {2}ngk_/);
    assert.match(r.stdout, /account:\s+demo@localhost/);
    assert.ok(r.stdout.includes(`http://127.0.0.1:${port}/v1/mainnet/${value}`), 'the curl line uses the new key');
    assert.equal(r.stderr, `store: SQLite ${join(dataDir, 'nodegate.db')}\n`, 'it says which store it changed');
  });

  test('refuses to create a new store where the running gateway\'s was evidently meant; --new-store creates one', async () => {
    const gateway = await startTestGateway({ networks: { mainnet: { chainId: 1 } } });
    const elsewhere = mkdtempSync(join(tmpdir(), 'nodegate-cli-elsewhere-'));
    try {
      const env = { NODEGATE_DATA_DIR: elsewhere, NODEGATE_PORT: new URL(gateway.url).port };
      const r = await cli(['keys', 'create', '--name', 'lost'], { env });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stdout, '', 'no key was made');
      assert.match(r.stderr, new RegExp(`no store at ${join(elsewhere, 'nodegate.db')}, but a Nodegate gateway answers on ${gateway.url}`));
      assert.match(r.stderr, /--new-store/);
      assert.equal(existsSync(join(elsewhere, 'nodegate.db')), false, 'and no store was created');
      const forced = await cli(['keys', 'create', '--name', 'meant', '--new-store'], { env });
      assert.equal(forced.code, 0, forced.stderr);
      assert.match(forced.stderr, new RegExp(`^store: SQLite ${join(elsewhere, 'nodegate.db')}$`, 'm'));
      // Once the store exists, it is the one meant: no flag needed.
      assert.equal((await cli(['keys', 'list'], { env })).code, 0);
    } finally {
      await gateway.close();
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  test('config check ends with one verdict line naming the store, valid or not', async () => {
    const ok = await cli(['config', 'check']);
    assert.equal(ok.code, 0, ok.stderr);
    const last = ok.stderr.trimEnd().split('\n').at(-1)!;
    assert.match(last, /^configuration is valid: http:\/\/127\.0\.0\.1:\d+; networks mainnet \(chain 1, embedded\), testnet \(chain 11155111, embedded\); store SQLite /);
    assert.ok(last.includes(join(dataDir, 'nodegate.db')));
    const bad = await cli(['config', 'check'], { env: { NODEGATE_PORT: 'seventy' } });
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr.trimEnd().split('\n').at(-1), 'configuration is invalid: 1 problem, nothing was started or changed');
  });

  test("config check shows no provider's key: a header's value as ***, or the variable it is read from; URL credentials as ***@; an unset variable is named", async () => {
    const file = join(dataDir, 'providers.yaml');
    writeFileSync(file, [
      'networks:',
      '  mainnet:',
      '    chainId: 1',
      '    upstreams:',
      '      - { url: "https://alice:pw-3f9a1c@node.example/rpc", ws: "wss://alice:pw-3f9a1c@node.example/ws", headers: { x-api-key: literal-key-77ab, authorization: { env: NG_TEST_KEY } } }',
    ].join('\n'));
    const ok = await cli(['config', 'check', '--config', file], { env: { NG_TEST_KEY: 'env-key-19cd' } });
    assert.equal(ok.code, 0, ok.stderr);
    for (const secret of ['pw-3f9a1c', 'literal-key-77ab', 'env-key-19cd', 'alice']) assert.ok(!(ok.stdout + ok.stderr).includes(secret), secret);
    assert.match(ok.stdout, /"x-api-key": "\*\*\*"/);
    assert.match(ok.stdout, /"env": "NG_TEST_KEY"/);
    const unset = await cli(['config', 'check', '--config', file], { env: { NG_TEST_KEY: undefined } });
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /networks\.mainnet\.upstreams\[0\]\.headers\.authorization: the environment variable NG_TEST_KEY is not set/);
  });

  test('changes made by the CLI take effect on a gateway running on the same store', async () => {
    let gateway: TestGateway | undefined;
    try {
      gateway = await startTestGateway({ dataDir, networks: { mainnet: { chainId: 1 } } });
      const gw = gateway;
      const status = async (key: string) => (await gw.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }, { key })).status;
      /** Polls until the gateway answers `want` (its key cache trusts a resolution for up to 1 s). */
      const eventually = async (key: string, want: number) => {
        const deadline = Date.now() + 3000;
        let got = await status(key);
        while (got !== want && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 100));
          got = await status(key);
        }
        assert.equal(got, want);
      };

      const created = await cli(['keys', 'create', '--name', 'ci']);
      const ci = firstKey(created.stdout)!;
      const res = await gw.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }, { key: ci });
      assert.equal(res.status, 200);
      assert.equal(res.body.result, '0x1');

      const { value: annKey } = await json(['keys', 'create', '--name', 'app', '--account', ann.email]);
      assert.equal(await status(annKey), 200);
      assert.equal((await json(['accounts', 'suspend', ann.email])).status, 'suspended');
      await eventually(annKey, 401);
      assert.equal(await status(ci), 200, "another account's keys still work");
      assert.equal((await json(['accounts', 'reactivate', ann.id])).status, 'active');
      await eventually(annKey, 200);

      const { keys } = await json(['keys', 'list']);
      const ciKey = keys.find((k: { name: string }) => k.name === 'ci');
      await json(['keys', 'revoke', ciKey.id]);
      await eventually(ci, 401);

      // An invitation and a reset link made by the operator on the command line work on the running gateway, once.
      const invited = await json(['accounts', 'invite', ann.email, '--email', 'newcomer@example.com', '--role', 'viewer']);
      assert.equal(invited.emailed, false, 'no mail.smtp here: the link is for the operator to hand over');
      const token = new URL(invited.url.replace('#/accept', 'accept')).searchParams.get('token');
      const accept = () => fetch(`${gw.url}/api/v1/invitations/accept`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, name: 'Newcomer', password: 'newcomer-password-1' }) });
      const joined = await accept();
      assert.equal(joined.status, 200);
      assert.equal(((await joined.json()) as { role: string }).role, 'viewer');
      assert.equal((await accept()).status, 400, 'the link works once');
      await refused(['accounts', 'invite', ann.email, '--email', 'x@example.com', '--role', 'boss'], 2, /--role: one of owner, developer, viewer/);
      const reset = await cli(['accounts', 'reset-link', ann.email]);
      assert.equal(reset.code, 0, reset.stderr);
      assert.match(reset.stdout, /#\/reset\?token=/);
    } finally {
      await gateway?.close();
    }
  });

  test('--config FILE is honoured: its data directory, plans and port', async () => {
    const other = mkdtempSync(join(tmpdir(), 'nodegate-cli-config-'));
    try {
      const file = join(other, 'nodegate.yaml');
      writeFileSync(file, [
        `dataDir: ${JSON.stringify(join(other, 'data'))}`,
        'server: { port: 9999 }',
        'plans: { hobby: { name: Hobby, cuPerSecond: 10, cuPerMonth: 1000 } }',
        'accounts: { defaultPlan: hobby }',
      ].join('\n'));
      const env = { NODEGATE_DATA_DIR: undefined, NODEGATE_PORT: undefined };
      assert.deepEqual((await json(['plans', 'list', '--config', file], { env })).plans.map((p: { id: string }) => p.id), ['hobby']);
      const r = await cli(['keys', 'create', '--config', file, '--name', 'x'], { env });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.includes(`http://127.0.0.1:9999/v1/mainnet/${firstKey(r.stdout)}`));
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  test('unknown commands and flags are usage errors (exit 2) that show the usage', async () => {
    await Promise.all([
      refused(['keys', 'frob'], 2, /unknown command: keys frob\nusage:\n {2}nodegate keys list/),
      refused(['accounts', 'list', '--bogus'], 2, /Unknown option '--bogus'\nusage:\n {2}nodegate accounts list/),
    ]);
  });
});
