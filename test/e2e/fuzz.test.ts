// Property-based fuzzing of the JSON-RPC endpoint through the wire (fast-check), against a whole in-process gateway
// and its embedded anvil: random bytes and JSON, mutated valid calls of every allowed method, a wrong type in
// every parameter of every method, batches and bodies over the limits, hostile values, slow-loris clients and
// malformed HTTP. Every answer must be a well-formed JSON-RPC answer with the catalogued HTTP status of its code,
// the gateway must stay up, and its memory must not grow. In the suite, a few thousand random inputs from a fixed
// seed (the same every run: the suite stays steady) besides every wrong value in every parameter and the inputs that
// once failed; `npm run soak -- fuzz` runs ~107,000 from a fresh seed each time (FUZZ_RUNS=12; test/helpers/soak.ts),
// and is where new failures are found. FUZZ_RUNS=n scales the random runs (1: ~12,000 inputs), FUZZ_SEED=n replays
// a run. Run: node --import tsx --test test/e2e/fuzz.test.ts
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { request } from 'undici';
import { ALLOWED_METHODS } from '../../src/methods/allowed.ts';
import { compileParamValidator } from '../../src/methods/param-validator.ts';
import { methodSchemas } from '../../src/methods/schemas/method-schemas.ts';
import {
  bodies, callableMethods, envelopes, GOOD_TYPES, mutatedCall, nested, requestLike, serialize, WRONG_VALUES, type Envelope,
} from '../helpers/fuzz-inputs.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { SOAK, sized } from '../helpers/soak.ts';
import { answerProblems, type Received } from '../helpers/wire-oracle.ts';

// The suite: 0.3 of the base runs (~3,000 random inputs); the soak: 12 times them, over 100,000 inputs,
// which take ~260 s on an idle 2-core machine and ~580 s with both cores kept busy: load, not a suite test.
const RUNS = sized(0.3, 12, 'FUZZ_RUNS');
/** The suite's seed: fixed, so a run fails only when the gateway changed, never because the dice did. */
const SUITE_SEED = 20261124;
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : SOAK ? Date.now() % 2 ** 31 : SUITE_SEED;
const MAX_BATCH = 100;
const REQUEST_TIMEOUT_MS = 1500;
const A0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'; // anvil's first development account
const ZERO = '0x' + '00'.repeat(20);

/** `gc()` without restarting node with --expose-gc. */
function collector(): () => void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) return g;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc');
}
const gc = collector();

/** A valid call of every allowed method (the state-changing two are templates: fuzzed, never sent valid). */
function seedCalls(chain: { blockHash: string; txHash: string; blockNumber: string }): Record<string, unknown[][]> {
  const { blockHash, txHash, blockNumber } = chain;
  const none: unknown[][] = [[]];
  return {
    web3_clientVersion: none, web3_sha3: [['0x68656c6c6f']], net_version: none, net_listening: none, net_peerCount: none,
    eth_protocolVersion: none, eth_syncing: none, eth_coinbase: none, eth_mining: none, eth_hashrate: none, eth_gasPrice: none,
    eth_accounts: none, eth_blockNumber: none, eth_chainId: none, eth_maxPriorityFeePerGas: none, eth_pendingTransactions: none,
    eth_newBlockFilter: none, eth_newPendingTransactionFilter: none,
    eth_getBalance: [[A0, 'latest'], [A0], [A0, { blockHash }]],
    eth_getStorageAt: [[A0, '0x0', 'latest']],
    eth_getTransactionCount: [[A0, 'pending']],
    eth_getBlockTransactionCountByHash: [[blockHash]],
    eth_getBlockTransactionCountByNumber: [[blockNumber]],
    eth_getUncleCountByBlockHash: [[blockHash]],
    eth_getUncleCountByBlockNumber: [['0x0']],
    eth_getCode: [[A0, 'latest']],
    eth_sign: [[A0, '0xdeadbeef']],
    eth_call: [[{ from: A0, to: ZERO, data: '0x', value: '0x0' }, 'latest', { [ZERO]: { balance: '0x1' } }, { number: '0x10' }]],
    eth_estimateGas: [[{ from: A0, to: ZERO, value: '0x1' }, 'latest']],
    eth_getBlockByHash: [[blockHash, false]],
    eth_getBlockByNumber: [['latest', true], ['0x0', false]],
    eth_getTransactionByHash: [[txHash]],
    eth_getTransactionByBlockHashAndIndex: [[blockHash, '0x0']],
    eth_getTransactionByBlockNumberAndIndex: [[blockNumber, '0x0']],
    eth_getTransactionReceipt: [[txHash]],
    eth_getUncleByBlockHashAndIndex: [[blockHash, '0x0']],
    eth_getUncleByBlockNumberAndIndex: [['0x0', '0x0']],
    eth_newFilter: [[{ fromBlock: '0x0', toBlock: 'latest', address: A0, topics: [null, ['0x' + '11'.repeat(32)]] }]],
    eth_uninstallFilter: [['0x1']],
    eth_getFilterChanges: [['0x1']],
    eth_getFilterLogs: [['0x1']],
    eth_getLogs: [[{ fromBlock: '0x0', toBlock: 'latest', topics: [] }], [{ blockHash }]],
    eth_feeHistory: [['0x4', 'latest', [25, 75]]],
    debug_traceTransaction: [[txHash, { tracer: 'callTracer' }]],
    debug_traceCall: [[{ from: A0, to: ZERO }, 'latest', { disableStack: true }]],
    debug_traceBlockByNumber: [[blockNumber, {}]],
    debug_traceBlockByHash: [[blockHash]],
    eth_sendTransaction: [[{ from: A0, to: ZERO, value: '0x1', gas: '0x5208', nonce: '0x0', input: '0x' }]],
    eth_sendRawTransaction: [['0x02f86a0180843b9aca00850430e23400825208940000000000000000000000000000000000000000018080c0']],
  };
}

// The soak's ~107,000 inputs take up to ~10 minutes on a busy machine; the suite's few thousand, well under one.
describe('fuzzing the endpoint through the wire', { timeout: SOAK ? 60 * 60_000 : 5 * 60_000 }, () => {
  let g: TestGateway;
  let slow: Server;
  let seeds: Record<string, unknown[][]>;
  let randomSeeds: Array<[string, unknown[]]>;
  let baseline: NodeJS.MemoryUsage;
  let tried = 0;
  let crashes = 0;
  const found: string[] = [];
  /** Answers by kind (`200 result`, `400 parse_error`, `200 node error`...), to show what the inputs reached. */
  const kinds = new Map<string, number>();
  const kindOf = (r: Received) => {
    if (r.status === 204) return '204 notifications';
    const a = JSON.parse(r.text);
    if (Array.isArray(a)) return '200 batch';
    return `${r.status} ${a.error ? a.error.data?.reason ?? 'node error' : 'result'}`;
  };

  const pathOf = (e: Envelope): { path: string; ok: boolean } => {
    switch (e.path) {
      case 'good': return { path: `/v1/mainnet/${g.key}`, ok: true };
      case 'devnet': return { path: `/v1/devnet/${g.key}`, ok: true };
      case 'unversioned': return { path: `/mainnet/${g.key}`, ok: true };
      case 'unknown-network': return { path: `/v1/goerli/${g.key}`, ok: false };
      case 'bad-key': return { path: `/v1/mainnet/ngk_${'A'.repeat(43)}`, ok: false };
      case 'no-key': return { path: '/v1/mainnet', ok: false };
      case 'random': return { path: `/v1/${encodeURIComponent(e.segment)}/${g.key}`, ok: ['mainnet', 'testnet', 'devnet'].includes(e.segment) };
    }
  };

  async function send(body: Buffer | Readable, path: string, contentType: string | undefined): Promise<Received> {
    const res = await request(g.url + path, {
      method: 'POST', body, headers: contentType === undefined ? {} : { 'content-type': contentType },
      // An answer that takes this long is a hang.
      headersTimeout: 20_000, bodyTimeout: 20_000,
    });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  /** Sends one input and checks its answer; counts inputs and failures, and checks /healthz every 250 inputs. */
  async function probe(body: Buffer, env: Envelope = { path: 'good', segment: '', contentType: 'application/json' }): Promise<Received> {
    tried++;
    const { path, ok } = pathOf(env);
    const envelopeOk = ok && GOOD_TYPES.has(env.contentType);
    let got: Received;
    try {
      got = await send(body, path, env.contentType);
    } catch (err) {
      crashes++;
      throw new Error(`no answer (${(err as Error).message}) to ${preview(body)}`);
    }
    const problems = answerProblems({ body, envelopeOk, maxBatch: MAX_BATCH, bodyLimit: 2 ** 20 }, got);
    if (problems.length) {
      crashes++;
      if (found.length < 20) found.push(`${problems.join('; ')} | ${preview(body)} -> ${got.status} ${got.text.slice(0, 200)}`);
      throw new Error(`${problems.join('; ')}\n  sent ${path} ${env.contentType}: ${preview(body)}\n  got ${got.status}: ${got.text.slice(0, 400)}`);
    }
    const kind = kindOf(got);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    if (tried % 250 === 0) await assertAlive();
    return got;
  }

  async function assertAlive(): Promise<void> {
    const res = await request(`${g.url}/healthz`, { headersTimeout: 5000 });
    assert.equal(res.statusCode, 200, '/healthz');
    assert.deepEqual(await res.body.json(), { status: 'ok', service: 'nodegate' });
  }

  const preview = (b: Buffer) => (b.length > 300 ? `${b.subarray(0, 300).toString('utf8')}… (${b.length} bytes)` : b.toString('utf8'));
  const fcOptions = (numRuns: number) => ({ numRuns: Math.max(1, Math.round(numRuns * RUNS)), seed: SEED, endOnFailure: false });
  const memory = () => { gc(); gc(); return process.memoryUsage(); };
  const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MB`;

  before(async () => {
    // A node whose eth_gasPrice answer comes after longer than the request time-out: a slow answer is not a slow
    // request. The rest (its chain id, 5, and the head the checks read) comes at once, as a node must answer them
    // before it serves any call.
    slow = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const { id, method } = (() => { try { return JSON.parse(body); } catch { return { id: 1, method: '' }; } })();
        const answer = () => res.setHeader('content-type', 'application/json').end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x5' }));
        if (method === 'eth_gasPrice') setTimeout(answer, REQUEST_TIMEOUT_MS + 1000);
        else if (method === 'eth_getBlockByNumber') res.setHeader('content-type', 'application/json').end(JSON.stringify({ jsonrpc: '2.0', id, result: { number: '0x5', hash: `0x${'5'.repeat(64)}`, parentHash: `0x${'4'.repeat(64)}`, timestamp: '0x5' } }));
        else answer();
      });
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    g = await startTestGateway({
      networks: {
        mainnet: { chainId: 1 },
        testnet: { chainId: 11155111, aliases: ['devnet'] },
        slownet: { chainId: 5, upstream: `http://127.0.0.1:${(slow.address() as { port: number }).port}` },
      },
      // An operator-added method that no schema describes: its params are only checked for depth.
      rpc: { maxBatchSize: MAX_BATCH, extraMethods: { mainnet: ['anvil_nodeInfo'] } },
      server: { requestTimeoutMs: REQUEST_TIMEOUT_MS },
      // Fuzzed paths send wrong keys by the thousand: the per-IP guard would then refuse the valid key too.
      limits: { unknownKeys: { perSecond: 1_000_000, burst: 1_000_000 } },
      log: { level: 'error' },
    });
    // One transaction, so that hashes, receipts and traces have something to find.
    const txHash = await g.call<string>('eth_sendTransaction', [{ from: A0, to: ZERO, value: '0x1' }]);
    let receipt: { blockHash: string; blockNumber: string } | null = null;
    for (let i = 0; i < 100 && !receipt; i++) {
      receipt = await g.call('eth_getTransactionReceipt', [txHash]);
      if (!receipt) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(receipt, 'the setup transaction was mined');
    seeds = seedCalls({ txHash, blockHash: receipt.blockHash, blockNumber: receipt.blockNumber });
    const callable = new Set(callableMethods(ALLOWED_METHODS));
    randomSeeds = Object.entries(seeds).filter(([m]) => callable.has(m)).flatMap(([m, list]) => list.map((ps) => [m, ps] as [string, unknown[]]));
    console.log(`# fuzz seed ${SEED} (FUZZ_SEED=${SEED} replays it), runs x${RUNS}`);
    // Warm-up: JIT, the key cache, the validators and the connection pools settle before memory is measured.
    const warm = fc.sample(bodies(mutatedCall(randomSeeds, callableMethods(ALLOWED_METHODS))), { numRuns: 400, seed: SEED });
    for (const b of warm) await probe(b);
    baseline = memory();
  });

  after(async () => {
    console.log(`# fuzz: ${tried} inputs tried, ${crashes} crashes${found.length ? ':\n#   ' + found.join('\n#   ') : ''}`);
    console.log(`# answers: ${[...kinds].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ×${n}`).join(', ')}`);
    await g?.close();
    slow?.closeAllConnections();
    slow?.close();
  });

  test('every allowed method has a valid call that passes validation and is answered', async () => {
    assert.deepEqual(Object.keys(seeds).sort(), [...ALLOWED_METHODS].sort(), 'a seed per allowed method');
    for (const [method, list] of Object.entries(seeds)) {
      const validate = compileParamValidator(methodSchemas[method]);
      for (const ps of list) assert.equal(validate(structuredClone(ps))?.message, undefined, `${method} ${JSON.stringify(ps)}`);
    }
    for (const [method, ps] of randomSeeds) {
      const r = await probe(serialize({ jsonrpc: '2.0', id: 1, method, params: ps }));
      assert.equal(r.status, 200, `${method}: ${r.text.slice(0, 200)}`);
    }
  });

  test('random bytes, random JSON and request-shaped objects get well-formed answers with catalogued statuses', async () => {
    await fc.assert(fc.asyncProperty(bodies(requestLike), envelopes, (b, e) => probe(b, e).then(() => {})), fcOptions(2500));
    await assertAlive();
  });

  test('mutated valid calls of every allowed method get well-formed answers with catalogued statuses', async () => {
    const calls = mutatedCall(randomSeeds, callableMethods(ALLOWED_METHODS));
    await fc.assert(fc.asyncProperty(bodies(calls), envelopes, (b, e) => probe(b, e).then(() => {})), {
      ...fcOptions(6000),
      // The regressions test's hard inputs: examples, so every run tries them first.
      examples: [
        [Buffer.from('{"jsonrpc":"2.0","id":1e400,"method":"eth_chainId"}'), { path: 'good', segment: '', contentType: 'application/json' }],
        [serialize({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: ZERO }, 'latest', { a: nested(10_000, 'array') }] }), { path: 'good', segment: '', contentType: 'application/json' }],
        [Buffer.from('{}'), { path: 'random', segment: '\u00ff'.repeat(101), contentType: 'application/json' }],
      ],
    });
    await assertAlive();
  });

  test('a wrong value in every parameter, and in every field of an object parameter, of every method is -32602 from the gateway', async () => {
    const nonceBefore = await g.call('eth_getTransactionCount', [A0, 'pending']);
    const blockBefore = await g.call('eth_blockNumber');
    const cases: Array<{ method: string; params: unknown[] }> = [];
    for (const method of ALLOWED_METHODS) {
      const base = seeds[method][0];
      for (let i = 0; i < methodSchemas[method].params.length; i++) {
        const at = (v: unknown) => { const ps = [...base]; while (ps.length < i) ps.push(null); ps[i] = v; return ps; };
        for (const w of WRONG_VALUES) cases.push({ method, params: at(w) });
        const p = base[i];
        if (p && typeof p === 'object' && !Array.isArray(p)) {
          for (const k of Object.keys(p)) for (const w of WRONG_VALUES) cases.push({ method, params: at({ ...p, [k]: w }) });
        }
      }
    }
    let refused = 0;
    let accepted = 0;
    const queue = [...cases];
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let c = queue.shift(); c; c = queue.shift()) {
        const body = serialize({ jsonrpc: '2.0', id: 7, method: c.method, params: c.params });
        // The gateway's own verdict, computed here the same way: on the params as the wire delivers them.
        const local = compileParamValidator(methodSchemas[c.method])((JSON.parse(body.toString('utf8')) as { params: unknown[] }).params);
        if (!local) {
          accepted++;
          // A valid call of a state-changing method would change the chain: not sent.
          if (c.method === 'eth_sendTransaction' || c.method === 'eth_sendRawTransaction') continue;
          await probe(body);
          continue;
        }
        refused++;
        const r = await probe(body);
        assert.equal(r.status, 200);
        const a = JSON.parse(r.text);
        assert.equal(a.error?.code, -32602, `${c.method} ${preview(body)}: ${r.text.slice(0, 300)}`);
        // data.reason marks the gateway's own error: the node was never asked.
        assert.equal(a.error.data.reason, 'invalid_params');
        assert.equal(a.error.message, local.message);
      }
    }));
    console.log(`# wrong values: ${cases.length} cases, ${refused} refused with -32602, ${accepted} valid after all`);
    assert.ok(refused > 2000);
    assert.equal(await g.call('eth_getTransactionCount', [A0, 'pending']), nonceBefore, 'no transaction reached the node');
    assert.equal(await g.call('eth_blockNumber'), blockBefore);
    await assertAlive();
  });

  test('batches around and over the limit, and bodies over the limit (sized or chunked), get their catalogued errors', async () => {
    const item = fc.oneof(
      fc.constant({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }),
      fc.constant({ jsonrpc: '2.0', method: 'eth_blockNumber' }),
      fc.constant({ jsonrpc: '2.0', id: 'x', method: 'nope' }),
      fc.constant(7),
      mutatedCall(randomSeeds, callableMethods(ALLOWED_METHODS)),
    );
    const sizes = fc.oneof(fc.integer({ min: 1, max: MAX_BATCH + 5 }), fc.constantFrom(MAX_BATCH - 1, MAX_BATCH, MAX_BATCH + 1), fc.integer({ min: MAX_BATCH + 1, max: 5 * MAX_BATCH }));
    const batch = sizes.chain((n) => fc.array(item, { minLength: n, maxLength: n }));
    await fc.assert(fc.asyncProperty(batch, (b) => probe(serialize(b)).then(() => {})), fcOptions(150));

    let r = await probe(Buffer.from('[' + Array(100_000).fill('1').join(',') + ']'));
    assert.deepEqual([r.status, JSON.parse(r.text).error.message], [400, 'Invalid Request: batch of 100000 requests exceeds the limit of 100']);
    r = await probe(Buffer.from('[]'));
    assert.equal(r.status, 400);
    const big = serialize({ jsonrpc: '2.0', id: 1, method: 'web3_sha3', params: ['0x' + 'ab'.repeat(600_000)] });
    r = await probe(big);
    assert.deepEqual([r.status, JSON.parse(r.text).error.message], [413, 'request body exceeds 1048576 bytes']);
    // Without a Content-Length (chunked), the limit is counted as the body arrives.
    async function* chunks(total: number) { for (let n = 0; n < total; n += 65_536) yield Buffer.alloc(Math.min(65_536, total - n), 0x20); }
    tried++;
    const chunked = await send(Readable.from(chunks(4 * 2 ** 20)), `/v1/mainnet/${g.key}`, 'application/json');
    assert.equal(chunked.status, 413);
    assert.equal(JSON.parse(chunked.text).error.data.reason, 'body_too_large');
    await assertAlive();
  });

  test('regressions found by the fuzzer: huge numbers, deep nesting, long strings, invalid UTF-8, odd paths', async () => {
    // An id of 1e400 parses to Infinity; echoed, it would be `"id":Infinity`: invalid JSON (src/rpc/framing.ts).
    for (const id of ['1e400', '-1e400']) {
      const r = await probe(Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"eth_chainId"}`));
      assert.equal(r.status, 400);
      assert.deepEqual([JSON.parse(r.text).id, JSON.parse(r.text).error.code], [null, -32600]);
    }
    // An open-ended object nested 10,000 deep passes the schema and would overflow JSON.stringify on its way to
    // the node (an HTTP 500): src/methods/param-validator.ts refuses more than 128 levels.
    for (const [params, index] of [
      [[{ to: ZERO }, 'latest', { a: nested(10_000, 'array') }], 2],
      [[{ to: ZERO, extra: nested(100_000, 'object') }, 'latest'], 0],
      [[{ to: ZERO }, 'latest', nested(129, 'object')], 2],
    ] as Array<[unknown[], number]>) {
      const r = await probe(serialize({ jsonrpc: '2.0', id: 3, method: 'eth_call', params }));
      assert.equal(r.status, 200);
      const a = JSON.parse(r.text);
      assert.deepEqual([a.error.code, a.error.data.index], [-32602, index]);
      assert.match(a.error.message, /nested deeper than 128 levels/);
    }
    const ok = await probe(serialize({ jsonrpc: '2.0', id: 4, method: 'eth_call', params: [{ to: ZERO }, 'latest', nested(100, 'object')] }));
    assert.equal(ok.status, 200);
    const extra = await probe(serialize({ jsonrpc: '2.0', id: 5, method: 'anvil_nodeInfo', params: [nested(10_000, 'array')] }));
    assert.deepEqual([extra.status, JSON.parse(extra.text).error.code], [200, -32602]);
    assert.ok('result' in JSON.parse((await probe(serialize({ jsonrpc: '2.0', id: 6, method: 'anvil_nodeInfo', params: [] }))).text));
    // Left to fastify, an undecodable or over-long path segment gets fastify's own shape, echoing the whole path (API
    // key included): the gateway answers a catalogued -32600 that never echoes it (src/http/client-errors.ts).
    for (const path of [`/v1/%ff/${g.key}`, `/v1/${'a'.repeat(101)}/${g.key}`, `/v1/mainnet/${g.key}${'x'.repeat(100)}`]) {
      tried++;
      const r = await send(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}'), path, 'application/json');
      assert.equal(r.status, 400, path);
      assert.equal(JSON.parse(r.text).error.code, -32600);
      assert.ok(r.headers['x-request-id']);
      assert.ok(!r.text.includes(g.key), 'the key is not echoed');
    }
    // Values that always worked, kept: a 10,000-level body, invalid UTF-8 in a method name, long strings.
    const deepBody = await probe(nested(10_000, 'array').bytes);
    assert.equal(deepBody.status, 200);
    const badUtf8 = await probe(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"eth_\xff'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]));
    assert.equal(JSON.parse(badUtf8.text).error.code, -32601);
    const longMethod = await probe(serialize({ jsonrpc: '2.0', id: 1, method: 'm'.repeat(500_000) }));
    assert.ok(longMethod.text.length < 1000, 'a long method name is not echoed whole');
    const bigId = await probe(Buffer.from('{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"eth_chainId"}'));
    assert.equal(bigId.status, 200);
  });

  test('slow loris: a trickled body, trickled headers or a silent connection get 408 within server.requestTimeoutMs, and others are served meanwhile', async () => {
    const port = Number(new URL(g.url).port);
    const loris = (start: string, drip: string) => new Promise<{ ms: number; text: string }>((resolve) => {
      const t0 = Date.now();
      const s = connect(port, '127.0.0.1');
      let text = '';
      s.setEncoding('utf8').on('data', (d) => { text += d; }).on('error', () => {});
      if (start) s.write(start);
      const drip1 = setInterval(() => { if (!s.destroyed && drip) s.write(drip); }, 100);
      const giveUp = setTimeout(() => s.destroy(), 20_000);
      s.on('close', () => { clearInterval(drip1); clearTimeout(giveUp); resolve({ ms: Date.now() - t0, text }); });
    });
    const head = `POST /v1/mainnet/${g.key} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n`;
    const clients = [
      ...Array.from({ length: 10 }, () => loris(`${head}Content-Length: 100000\r\n\r\n{"jsonrpc":`, ' ')),
      ...Array.from({ length: 5 }, () => loris(head, 'X-Slow: 1\r\n')),
      ...Array.from({ length: 5 }, () => loris('', '')),
    ];
    // Meanwhile the gateway serves everyone else, at once.
    const t0 = Date.now();
    await assertAlive();
    assert.equal(await g.call('eth_chainId'), '0x1');
    assert.ok(Date.now() - t0 < 1000, 'served while slow clients hold connections');
    // A slow node is not a slow request: an answer that takes longer than the request time-out still arrives.
    const slowAnswer = await g.rpc({ jsonrpc: '2.0', id: 5, method: 'eth_gasPrice' }, { network: 'slownet' });
    assert.deepEqual([slowAnswer.status, slowAnswer.body.result], [200, '0x5']);
    for (const c of await Promise.all(clients)) {
      assert.ok(c.ms >= REQUEST_TIMEOUT_MS - 50 && c.ms < REQUEST_TIMEOUT_MS + 2000, `closed after ${c.ms} ms`);
      const [headers, body] = c.text.split('\r\n\r\n');
      assert.match(headers, /^HTTP\/1\.1 408 /);
      assert.deepEqual(JSON.parse(body), {
        jsonrpc: '2.0', id: null,
        error: { code: -32600, message: `request not received within ${REQUEST_TIMEOUT_MS} ms`, data: { reason: 'request_timeout', limit: REQUEST_TIMEOUT_MS } },
      });
    }
    await assertAlive();
  });

  test('malformed HTTP gets a JSON-RPC 400 and a closed connection', async () => {
    const port = Number(new URL(g.url).port);
    const raw = (data: string) => new Promise<string>((resolve) => {
      const s = connect(port, '127.0.0.1');
      let text = '';
      s.setEncoding('utf8').on('data', (d) => { text += d; }).on('error', () => {}).on('close', () => resolve(text));
      s.write(data);
    });
    for (const data of [
      'HELLO\x00\r\n\r\n',
      `POST /v1/mainnet/${g.key} HTTP/1.1\r\nHo st: x\r\n\r\n`,
      `POST /v1/mainnet/${g.key} HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`,
      `POST /v1/mainnet/${g.key} HTTP/1.1\r\nHost: x\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`,
      `POST /v1/mainnet/${g.key} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    ]) {
      tried++;
      const text = await raw(data);
      const [headers, body] = text.split('\r\n\r\n');
      assert.match(headers, /^HTTP\/1\.1 400 /, JSON.stringify(data.slice(0, 60)));
      const a = JSON.parse(body);
      assert.deepEqual([a.jsonrpc, a.id, a.error.code, a.error.data.reason], ['2.0', null, -32600, 'invalid_request']);
    }
    await assertAlive();
  });

  test('memory does not grow over thousands of inputs', () => {
    const end = memory();
    const heap = end.heapUsed - baseline.heapUsed;
    const rss = end.rss - baseline.rss;
    console.log(`# memory after warm-up: heap ${mb(baseline.heapUsed)}, rss ${mb(baseline.rss)}; after ${tried} inputs: heap ${mb(end.heapUsed)} (${heap >= 0 ? '+' : ''}${mb(heap)}), rss ${mb(end.rss)} (${rss >= 0 ? '+' : ''}${mb(rss)})`);
    // A leak of even 2 KB per input would show as tens of megabytes; JIT code and caches move a few.
    assert.ok(heap < 16 * 2 ** 20, `heap grew by ${mb(heap)}`);
    assert.ok(rss < 192 * 2 ** 20, `rss grew by ${mb(rss)}`);
    assert.equal(crashes, 0);
  });
});
