/**
 * Upstreams as the market sells them, through the wire: loopback providers (test/helpers/provider.ts) in front of
 * one real anvil, beside an "own node" (test/helpers/fake-node.ts, the same anvil, counting what it gets). A key in
 * a header from the environment, Basic credentials in the URL, 429 with Retry-After: 2, a provider without traces,
 * an own node at its concurrency with a paid provider as fallback, a provider that prunes state older than 128 blocks.
 * Hedged reads are off here (upstreams.hedgeMaxMs: 0): a hedge is a second call by design, and these tests count calls;
 * so is the background probe of what each node holds (upstreams.holdingsProbeMs: 0; test/e2e/upstream-holdings.test.ts).
 * Run: node --import tsx --test test/e2e/upstream-providers.test.ts
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/app.ts';
import { validateConfig } from '../../src/config/load.ts';
import { startAnvil, type TestAnvil } from '../helpers/anvil.ts';
import { eventually } from '../helpers/eventually.ts';
import { startFakeNode, type FakeNode } from '../helpers/fake-node.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startProvider, type Provider } from '../helpers/provider.ts';

const KEY = 'prov-key-7c1d55e0a9b3';
const PASSWORD = 'b4sic-s3cret-91';
const SENDER = '0xf39Fd6e51aad88F6F4ce6aB8827279cfFFb92266';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const address = () => `0x${randomBytes(20).toString('hex')}`;

let node: TestAnvil;
let g: TestGateway;
const lines: string[] = [];
const closers: Array<() => Promise<void> | void> = [];
let keyed: Provider;
let basic: Provider;
let throttled: Provider;
let ownOfThrottled: FakeNode;
let noTraces: Provider;
let noTracesSaid: Provider;
let ownOfTraces: FakeNode;
let own: FakeNode;
let paid: Provider;
let pruned: Provider;

before(async () => {
  node = await startAnvil();
  closers.push(() => node.stop());
  const start = async <T extends { close(): Promise<void> }>(p: Promise<T>) => { const x = await p; closers.push(() => x.close()); return x; };
  keyed = await start(startProvider(node.url, { key: { header: 'x-api-key', value: KEY } }));
  basic = await start(startProvider(node.url, { basic: { user: 'nodegate', password: PASSWORD } }));
  throttled = await start(startProvider(node.url));
  ownOfThrottled = await start(startFakeNode(node.url));
  noTraces = await start(startProvider(node.url, { lacks: ['debug_'] }));
  noTracesSaid = await start(startProvider(node.url, { lacks: ['debug_'] }));
  ownOfTraces = await start(startFakeNode(node.url));
  own = await start(startFakeNode(node.url));
  paid = await start(startProvider(node.url));
  pruned = await start(startProvider(node.url, { pruneOlderThan: 128 }));
  process.env.NODEGATE_TEST_PROVIDER_KEY = KEY;
  const raw = {
    networks: {
      keyed: { chainId: 1, upstreams: [{ url: keyed.url, headers: { 'x-api-key': { env: 'NODEGATE_TEST_PROVIDER_KEY' } } }] },
      basic: { chainId: 1, upstream: basic.url.replace('http://', `http://nodegate:${PASSWORD}@`) },
      // A provider that is down, with its key: what its errors, the logs and /readyz say of it.
      'keyed-down': { chainId: 1, upstreams: [{ url: 'http://127.0.0.1:9/rpc', headers: { 'x-api-key': { env: 'NODEGATE_TEST_PROVIDER_KEY' } } }] },
      throttled: { chainId: 1, upstreams: [{ url: throttled.url }, { url: ownOfThrottled.origin }] },
      traces: { chainId: 1, upstreams: [{ url: noTraces.url, lacks: ['debug_*'] }, { url: ownOfTraces.origin, role: 'fallback' }] },
      'traces-learnt': { chainId: 1, upstreams: [{ url: noTracesSaid.url }, { url: ownOfTraces.origin, role: 'fallback' }] },
      tiered: { chainId: 1, upstreams: [{ url: own.origin, concurrency: 2 }, { url: paid.url, role: 'fallback' }] },
      pruned: { chainId: 1, upstreams: [{ url: pruned.url }, { url: node.url, role: 'fallback' }] },
    },
    upstreams: { checkIntervalMs: 100, hedgeMaxMs: 0, breakerCooldownMs: 500, holdingsProbeMs: 0 },
    cache: { enabled: false },
    log: { level: 'trace', requests: true },
  };
  const sink = new Writable({ write(chunk, _e, cb) { lines.push(String(chunk)); cb(); } });
  g = await startTestGateway(raw, { log: createLogger(validateConfig({ log: { level: 'trace' } }), sink) });
});

after(async () => {
  await g?.close();
  for (const c of closers.reverse()) await c();
  delete process.env.NODEGATE_TEST_PROVIDER_KEY;
});

const balance = (network: string, at = 'latest') => g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [address(), at] }, { network });
const failures = (rs: Array<{ status: number; body: any }>) => rs.filter((r) => r.status !== 200 || r.body?.error);

describe('providers as the market sells them', { timeout: 180_000 }, () => {
  test('a provider wanting its key in a header (from the environment) and one wanting Basic credentials: 0 client errors, 0 401s; the secrets are in no log line, error, /readyz nor the operator\'s network page', async () => {
    const answers = [];
    for (let i = 0; i < 30; i++) answers.push(await balance('keyed'), await balance('basic'));
    console.log(`keys: ${answers.length} reads, ${failures(answers).length} failed; 401s at the providers: ${keyed.requests.filter((r) => r.status === 401).length} and ${basic.requests.filter((r) => r.status === 401).length} of ${keyed.requests.length} and ${basic.requests.length} requests`);
    assert.deepEqual(failures(answers), []);
    assert.equal(keyed.requests.filter((r) => r.status === 401).length, 0);
    assert.equal(basic.requests.filter((r) => r.status === 401).length, 0);
    const down = await balance('keyed-down');
    assert.equal(down.status, 503);
    const readyz = await (await fetch(`${g.url}/readyz`)).text();
    const operator = 'Basic ' + Buffer.from(`${g.gw.secrets.operatorEmail}:${g.gw.secrets.operatorPassword}`).toString('base64');
    const page = await (await fetch(`${g.url}/api/v1/operator/networks`, { headers: { authorization: operator } })).text();
    assert.match(page, /keyed-down|127\.0\.0\.1:9/);
    const shown = [down.text, readyz, page, ...lines].join('\n');
    console.log(`keys: looked for in ${lines.length} log lines (trace), the down provider's ${down.status}, /readyz and the operator's networks page`);
    assert.ok(lines.length > 50, `${lines.length} log lines`);
    for (const secret of [KEY, PASSWORD, Buffer.from(`nodegate:${PASSWORD}`).toString('base64')]) assert.ok(!shown.includes(secret), `${secret.slice(0, 4)}… is shown`);
  });

  test('429 with Retry-After: 2: no call reaches it for 2 s (checks included), 0 client errors', async () => {
    await sleep(300);
    const stop = Date.now() + 3500;
    throttled.throttle(1, 2);
    let sent = 0;
    const answers = [];
    while (Date.now() < stop) {
      answers.push(await balance('throttled'));
      sent++;
    }
    const limited = throttled.requests.find((r) => r.status === 429);
    assert.ok(limited, 'the provider answered 429 once');
    // A request already on its way when the 429 was written may arrive just after it: 25 ms of slack.
    const during = throttled.requests.filter((r) => r.at > limited.at + 25 && r.at < limited.at + 2000);
    const after429 = throttled.requests.filter((r) => r.at >= limited.at + 2000);
    const window = throttled.requests.filter((r) => r.at >= stop - 3500);
    const atProvider = throttled.calls('eth_getBalance', stop - 3500);
    const atOther = ownOfThrottled.requests.flat().filter((m) => m === 'eth_getBalance').length;
    console.log(`429: ${sent} client calls, ${failures(answers).length} failed; the provider got ${window.length} requests (checks included; ${during.length} in the 2 s after its 429, ${after429.length} after); eth_getBalance calls: ${atProvider} at the provider (the one it answered 429 included) + ${atOther} at the other node = ${((atProvider + atOther) / sent).toFixed(3)} upstream calls per client call`);
    assert.deepEqual(failures(answers), []);
    assert.equal(during.length, 0);
    assert.ok(after429.length > 0, 'asked again after its Retry-After');
  });

  test('a provider without traces (lacks: [debug_*]) never receives one: traces go to the node that has them; one that only says so (-32601) gets at most one', async () => {
    const hash = await node.call('eth_sendTransaction', [{ from: SENDER, to: '0x00000000000000000000000000000000000000b0', value: '0x1' }]) as string;
    for (let i = 0; i < 100 && !(await node.call('eth_getTransactionReceipt', [hash])); i++) await sleep(20);
    const answers = [];
    for (let i = 0; i < 10; i++) {
      answers.push(await g.rpc({ jsonrpc: '2.0', id: 1, method: 'debug_traceTransaction', params: [hash] }, { network: 'traces' }));
      answers.push(await g.rpc({ jsonrpc: '2.0', id: 1, method: 'debug_traceTransaction', params: [hash] }, { network: 'traces-learnt' }));
    }
    const reads = await Promise.all(Array.from({ length: 10 }, () => balance('traces')));
    console.log(`traces: ${answers.length} traces, ${failures(answers).length} failed; traces at the provider configured without: ${noTraces.calls('debug_traceTransaction')}, at the one that says -32601: ${noTracesSaid.calls('debug_traceTransaction')}; reads at the provider: ${noTraces.calls('eth_getBalance')} of 10`);
    assert.deepEqual(failures(answers), []);
    assert.ok(answers.every((a) => a.body.result?.structLogs !== undefined || a.body.result?.gas !== undefined));
    assert.equal(noTraces.calls('debug_traceTransaction'), 0);
    assert.ok(noTracesSaid.calls('debug_traceTransaction') <= 1);
    assert.deepEqual(failures(reads), []);
    assert.equal(noTraces.calls('eth_getBalance'), 10, 'reads still go to it: it is the primary');
  });

  test('tiers: the paid provider (a fallback) gets no call while the own node is healthy and under its concurrency, the overflow when it is at it, everything when it is down', async () => {
    const since = Date.now();
    const calm = [];
    for (let i = 0; i < 40; i++) calm.push(await balance('tiered'));
    const paidCalm = paid.calls('eth_getBalance', since);
    const ownCalm = own.calls;
    const busySince = Date.now();
    const checksCalm = paid.requests.filter((r) => r.at >= since).length;
    const burst = await Promise.all(Array.from({ length: 64 }, () => balance('tiered')));
    const paidBusy = paid.calls('eth_getBalance', busySince);
    await own.close();
    const downSince = Date.now();
    const down = [];
    for (let i = 0; i < 20; i++) down.push(await balance('tiered'));
    const paidDown = paid.calls('eth_getBalance', downSince);
    console.log(`tiers: calm 40 sequential reads in ${busySince - since} ms: paid ${paidCalm} calls (its checks meanwhile: ${checksCalm} requests; own node ${ownCalm} requests since start, checks included); 64 at once: paid ${paidBusy}; own node down, 20 reads: paid ${paidDown}; failed ${failures([...calm, ...burst, ...down]).length}`);
    assert.equal(paidCalm, 0);
    assert.ok(paidBusy > 0, 'the overflow went to the paid provider');
    assert.ok(paidDown >= 19, 'with the own node down, the paid provider serves');
    assert.deepEqual(failures([...calm, ...burst]), []);
    assert.deepEqual(failures(down), []);
  });

  test('a provider that prunes state older than 128 blocks: an old balance is answered by the archive node, 0 client errors', async () => {
    await node.call('anvil_mine', ['0xc8']);
    const head = Number(await node.call('eth_blockNumber'));
    // Both nodes seen at the new head by the gateway's checks first: until then the archive node, 200 blocks behind
    // what the provider's answers showed, is lagging and takes no call.
    await eventually(() => g.gw.networks.get('pruned')!.chain.status().every((u) => u.state === 'up' && (u.head ?? 0) >= head), 15_000, 'both nodes of pruned up at the new head');
    const old = `0x${(head - 190).toString(16)}`;
    const before = pruned.calls('eth_getBalance');
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [SENDER, old] }, { network: 'pruned' }));
    const direct = await node.call('eth_getBalance', [SENDER, old]);
    console.log(`pruned: 10 balances at block ${Number(old)} (head ${head}): ${failures(answers).length} failed; the pruned provider was asked ${pruned.calls('eth_getBalance') - before} times`);
    assert.deepEqual(failures(answers), []);
    assert.ok(answers.every((a) => a.body.result === direct));
  });
});
