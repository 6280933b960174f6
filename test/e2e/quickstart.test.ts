import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../src/upstream/embedded/free-port.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const CLI = [join(ROOT, 'bin/nodegate.mjs')];

/** The README's quick start, as a newcomer runs it: `npm start` on a fresh data directory, then the printed curl line. */
describe('quick start: the start command on the embedded default', () => {
  let dataDir: string;
  let child: ReturnType<typeof spawn>;
  let out = '';
  let url: string;
  let key: string;
  let curlLine: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'nodegate-quickstart-'));
    const port = await freePort();
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    // The README says `npm start`: run exactly its script, minus npm's wrapper process (the build `npm ci` made,
    // or the source when src/ is newer than it).
    assert.match(pkg.scripts.start, /^node (--[\w-]+=\S+ )*bin\/nodegate\.mjs start$/);
    child = spawn(process.execPath, pkg.scripts.start.split(' ').slice(1), { cwd: ROOT, env: { ...process.env, NODEGATE_DATA_DIR: dataDir, NODEGATE_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.setEncoding('utf8').on('data', (s: string) => { out += s; });
    child.stderr!.setEncoding('utf8').on('data', (s: string) => { out += s; });
    const started = Date.now();
    while (!/curl .*\n/.test(out)) {
      if (child.exitCode !== null) throw new Error(`nodegate exited: ${out}`);
      if (Date.now() - started > 30_000) throw new Error(`no banner within 30 s: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    url = /Nodegate listening on (http:\/\/\S+)/.exec(out)![1];
    key = /\b(ngk_[0-9A-Za-z]+)\b/.exec(out)![1];
    curlLine = /^\s*(curl .*)$/m.exec(out)![1];
  });

  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  const rpc = async (network: string, method: string) => {
    const res = await fetch(`${url}/v1/${network}/${key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }) });
    return res.json();
  };

  test('the banner names both embedded networks, their chain ids, and says they are local', () => {
    assert.match(out, /mainnet\s+chain id 1\s+embedded local chain/);
    assert.match(out, /testnet \(also devnet\)\s+chain id 11155111\s+embedded local chain/);
    assert.match(out, /not a public network/);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  test('the banner names the dashboard, which answers there', async () => {
    assert.match(out, new RegExp(`dashboard: ${url}/dashboard`));
    const res = await fetch(`${url}/dashboard/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /text\/html/);
    assert.match(res.headers.get('content-security-policy')!, /script-src 'self'/);
    assert.match(await res.text(), /<title>Nodegate dashboard<\/title>/);
  });

  test('the printed demo login logs in to the dashboard, as the owner of the account with the printed key', async () => {
    const [, email, password] = /dashboard login: (\S+)\s+password: (\S+)/.exec(out) ?? [];
    assert.equal(email, 'demo@localhost', out);
    const res = await fetch(`${url}/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.role, 'owner');
    const keys = await fetch(`${url}/api/v1/keys`, { headers: { cookie: res.headers.getSetCookie()[0].split(';')[0] } });
    assert.ok((await keys.json()).keys.some((k: { prefix: string }) => key.startsWith(k.prefix)), 'the printed key is the account\'s');
  });

  test('the printed curl line returns the block number', async () => {
    const { stdout } = await run('sh', ['-c', curlLine]);
    const body = JSON.parse(stdout);
    assert.equal(body.id, 1);
    assert.match(body.result, /^0x[0-9a-f]+$/);
  });

  test('eth_chainId is 0x1 on mainnet and 0xaa36a7 on testnet and devnet', async () => {
    assert.equal((await rpc('mainnet', 'eth_chainId')).result, '0x1');
    assert.equal((await rpc('testnet', 'eth_chainId')).result, '0xaa36a7');
    assert.equal((await rpc('devnet', 'eth_chainId')).result, '0xaa36a7');
  });

  test('the demo key is stored only as its hash', () => {
    const db = readFileSync(join(dataDir, 'nodegate.db'));
    assert.ok(!db.includes(key), 'the key value is not in the SQLite file');
  });

  test('`nodegate keys create` prints a new key that works at once', async () => {
    const { stdout } = await run(process.execPath, [...CLI, 'keys', 'create', '--name', 'ci'], { cwd: ROOT, env: { ...process.env, NODEGATE_DATA_DIR: dataDir } });
    const created = /\b(ngk_[0-9A-Za-z]+)\b/.exec(stdout)![1];
    assert.notEqual(created, key);
    const res = await fetch(`${url}/v1/mainnet/${created}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).result, '0x1');
  });

  test('`nodegate config check` names the bad field and exits non-zero', async () => {
    await assert.rejects(
      run(process.execPath, [...CLI, 'config', 'check'], { cwd: ROOT, env: { ...process.env, NODEGATE_PORT: 'seventy' } }),
      (err: { code: number; stderr: string }) => err.code === 2 && /server\.port: must be integer/.test(err.stderr),
    );
  });

  test('SIGTERM stops it cleanly (exit 0) and leaves no anvil behind', async () => {
    const pids = ['mainnet', 'testnet'].map((n) => JSON.parse(readFileSync(join(dataDir, 'chains', n, 'anvil.pid'), 'utf8')).pid as number);
    child.kill('SIGTERM');
    const code = await new Promise((r) => child.once('exit', r));
    assert.equal(code, 0);
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), 'anvil is gone');
  });
});
