import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError, loadConfig } from './load.ts';

const dir = mkdtempSync(join(tmpdir(), 'ng-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

/** An upstream's fields after loading, every default filled. */
const UPSTREAM = { role: 'primary', weight: 1, shareReads: true, headers: {}, rate: 0, concurrency: 0, getLogs: { maxBlockRange: 0, maxResults: 0 }, maxBatch: 100, lacks: [], archive: false, stateWindow: 0, units: {} };

test('with no file, the defaults: embedded mainnet and testnet (devnet alias), 127.0.0.1:8545, ./data', () => {
  const c = loadConfig(undefined, {});
  assert.equal(c.server.host, '127.0.0.1');
  assert.equal(c.server.port, 8545);
  assert.equal(c.dataDir, './data');
  const embedded = [{ url: 'embedded', ...UPSTREAM }];
  assert.deepEqual(c.networks.mainnet, { chainId: 1, upstreams: embedded, aliases: [], verify: 'cheap' });
  assert.deepEqual(c.networks.testnet, { chainId: 11155111, upstreams: embedded, aliases: ['devnet'], verify: 'cheap' });
  assert.equal(c.rpc.maxBatchSize, 1000);
  assert.equal(c.server.bodyLimit, 1048576);
  assert.ok(Object.isFrozen(c.server));
});

test("a stop's deadline: 20 s; an older file's embedded.historyBudgetMs still sets it; server.stopDeadlineMs over both", () => {
  assert.equal(loadConfig(undefined, {}).server.stopDeadlineMs, 20_000);
  const old = loadConfig(file('old.yaml', 'embedded:\n  historyBudgetMs: 10000\n  snapshotIntervalMs: 200\n'), {});
  assert.equal(old.server.stopDeadlineMs, 25_000);
  const named = loadConfig(file('named.yaml', 'server:\n  stopDeadlineMs: 8000\nembedded:\n  historyBudgetMs: 10000\n'), {});
  assert.equal(named.server.stopDeadlineMs, 8000);
});

test('a YAML file and environment overrides; the environment wins', () => {
  const p = file('nodegate.yaml', 'server:\n  port: 9000\nnetworks:\n  mainnet:\n    chainId: 1\n    upstream: https://user:pw@node.example/rpc\n');
  const c = loadConfig(p, { NODEGATE_PORT: '9100', NODEGATE_DATA_DIR: '/tmp/x', NODEGATE_HOST: '0.0.0.0' });
  assert.equal(c.server.port, 9100);
  assert.equal(c.server.host, '0.0.0.0');
  assert.equal(c.dataDir, '/tmp/x');
  assert.equal(c.networks.mainnet.upstream, 'https://user:pw@node.example/rpc');
  assert.deepEqual(c.networks.mainnet.upstreams, [{ url: 'https://user:pw@node.example/rpc', ...UPSTREAM }], 'the shorthand is one primary');
  assert.equal(c.networks.testnet, undefined);
  assert.equal(loadConfig(undefined, { PORT: '7000' }).server.port, 7000);
});

test('NODEGATE_CONFIG names the file; JSON works too', () => {
  const p = file('nodegate.json', JSON.stringify({ rpc: { maxBatchSize: 10 } }));
  assert.equal(loadConfig(undefined, { NODEGATE_CONFIG: p }).rpc.maxBatchSize, 10);
});

test('errors name the field', () => {
  const p = file('bad.yaml', 'server:\n  port: 70000\nrpc:\n  maxBatchSize: 5000\n  bogus: 1\nnetworks:\n  mainnet:\n    upstream: ftp://x\n');
  assert.throws(() => loadConfig(p, {}), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    const text = err.problems.join('\n');
    assert.match(text, /server\.port: must be <= 65535 \(port\)/);
    assert.match(text, /rpc\.maxBatchSize: must be <= 1000/);
    assert.match(text, /rpc: must NOT have additional properties 'bogus'/);
    assert.match(text, /networks\.mainnet: must have required property 'chainId'/);
    assert.match(text, /networks\.mainnet\.upstream: must match pattern/);
    return true;
  });
  assert.throws(() => loadConfig(file('typo.yaml', 'rpc:\n  maxBachSize: 10\n'), {}), /rpc: must NOT have additional properties 'maxBachSize' \(did you mean 'maxBatchSize'\?\)/, 'a misspelt field gets its likely name');
  assert.throws(() => loadConfig(undefined, { NODEGATE_PORT: 'abc' }), /server\.port: must be integer/);
  // A number's unit (the schema's annotation) follows a bound, so the value to write is plain.
  assert.throws(() => loadConfig(file('ms.yaml', 'rpc:\n  timeoutMs: 5\n'), {}), /rpc\.timeoutMs: must be >= 100 \(ms\)/);
  assert.throws(() => loadConfig('/nonexistent/nodegate.yaml', {}), /cannot read \(ENOENT\)/);
  assert.throws(() => loadConfig(file('x.yaml', 'server: [1,'), {}), /not valid YAML or JSON/);
});

test('a webhook lease renewed no more often than it lasts is refused (it would run out between renewals)', () => {
  assert.throws(() => loadConfig(file('lease.yaml', 'webhooks:\n  leaseMs: 1000\n'), {}), /webhooks\.leaseRenewMs: must be < webhooks\.leaseMs \(1000\)/);
  const c = loadConfig(file('lease-ok.yaml', 'webhooks:\n  leaseMs: 1500\n  leaseRenewMs: 500\n'), {});
  assert.deepEqual([c.webhooks.leaseMs, c.webhooks.leaseRenewMs], [1500, 500]);
});

test("a response share smaller than the largest response is refused (no tenant could be sent one)", () => {
  assert.throws(() => loadConfig(file('share.yaml', 'rpc:\n  responseShare: 0.1\n'), {}), /rpc\.responseShare: its share of rpc\.maxResponseBytesInFlight must be >= rpc\.maxResponseBytes/);
  const c = loadConfig(file('share-ok.yaml', 'rpc:\n  responseShare: 0.125\n'), {});
  assert.equal(c.rpc.responseShare, 0.125);
});

test('a network name used twice (as a name and an alias) is refused', () => {
  const p = file('dup.yaml', 'networks:\n  mainnet: { chainId: 1, aliases: [testnet] }\n  testnet: { chainId: 5 }\n');
  assert.throws(() => loadConfig(p, {}), /the name testnet is used twice/);
});

test('a network of several upstreams: roles and weights kept; embedded alone; one primary at least; not both forms', () => {
  const ok = file('pool.yaml', [
    'networks:',
    '  mainnet:',
    '    chainId: 1',
    '    upstreams:',
    '      - { url: "http://a.example", weight: 2 }',
    '      - { url: "http://b.example", role: fallback, timeoutMs: 2000 }',
  ].join('\n'));
  assert.deepEqual(loadConfig(ok, {}).networks.mainnet.upstreams, [
    { url: 'http://a.example', ...UPSTREAM, weight: 2 },
    { url: 'http://b.example', ...UPSTREAM, role: 'fallback', timeoutMs: 2000 },
  ]);
  const bad = (yaml: string, message: RegExp) => assert.throws(() => loadConfig(file('bad-pool.yaml', yaml), {}), message);
  bad('networks:\n  mainnet:\n    chainId: 1\n    upstreams: [{ url: embedded }, { url: "http://a.example" }]\n', /embedded is a local chain of its own/);
  bad('networks:\n  mainnet:\n    chainId: 1\n    upstreams: [{ url: "http://a.example", role: fallback }]\n', /at least one upstream must be a primary/);
  bad('networks:\n  mainnet:\n    chainId: 1\n    upstream: embedded\n    upstreams: [{ url: "http://a.example" }]\n', /give upstream or upstreams, not both/);
});

test("an upstream's provider fields: headers as text or from the environment (unset: the field and the variable named, never a value), bounds, lacks", () => {
  const p = file('provider.yaml', [
    'networks:',
    '  mainnet:',
    '    chainId: 1',
    '    upstreams:',
    '      - { url: "http://own.example" }',
    '      - url: "https://provider.example/v2"',
    '        role: fallback',
    '        headers: { x-api-key: { env: PROVIDER_KEY }, x-team: nodegate }',
    '        rate: 25',
    '        concurrency: 4',
    '        getLogs: { maxBlockRange: 2000 }',
    '        lacks: ["debug_*", eth_getProof]',
  ].join('\n'));
  const provider = loadConfig(p, { PROVIDER_KEY: 'k-123' }).networks.mainnet.upstreams[1];
  assert.deepEqual(provider.headers, { 'x-api-key': { env: 'PROVIDER_KEY' }, 'x-team': 'nodegate' }, 'the configuration keeps the name, not the value');
  assert.equal(provider.rate, 25);
  assert.equal(provider.concurrency, 4);
  assert.deepEqual(provider.getLogs, { maxBlockRange: 2000, maxResults: 0 });
  assert.deepEqual(provider.lacks, ['debug_*', 'eth_getProof']);
  assert.throws(() => loadConfig(p, {}), (err: Error) => /networks\.mainnet\.upstreams\[1\]\.headers\.x-api-key: the environment variable PROVIDER_KEY is not set/.test(err.message));
  assert.throws(() => loadConfig(file('bad-lacks.yaml', 'networks:\n  mainnet:\n    chainId: 1\n    upstreams: [{ url: "http://a.example", lacks: ["debug_*_x"] }]\n'), {}), /lacks/);
});
