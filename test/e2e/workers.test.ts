/**
 * `nodegate start --workers 2`: one port served by two processes, on the embedded default (no Redis, no
 * PostgreSQL). A client's connections land on either worker (node's cluster module hands them out in turn); each
 * call below opens a connection of its own, so consecutive calls are served by different workers, as behind a load
 * balancer. What one process guarantees must hold: the real-client workflows, read-your-writes across the workers,
 * a filter made on one polled on the other, one key's per-second limit and one address's bad-key burst in all.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { request as httpRequest, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { clientWorkflows } from '../helpers/client-workflows.ts';
import { startInstantNode } from '../helpers/instant-node.ts';
import { offerLoad } from '../helpers/offered-load.ts';
import { killAll, startNodegate, type NodegateProcess } from '../helpers/process.ts';

/** One call on a connection of its own (no keep-alive): the next call may reach the other worker. */
function fresh(url: string, body?: unknown, method = 'POST'): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(url, { method, agent: false, headers: data ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => { text += c; }).on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** The banner comes once both workers listen: three processes starting on a machine of two busy cores. */
const START_MS = 180_000;

clientWorkflows('real client workflows on the printed key, with --workers 2', { env: { NODEGATE_WORKERS: '2' } });

describe('two workers on the embedded default: one head, one set of filters, one guard', { timeout: 300_000 }, () => {
  let ng: NodegateProcess;
  const BURST = 6;
  /** anvil's development account 8: its own nonces. */
  const FROM = '0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f';
  let id = 1;
  const rpc = async (method: string, params: unknown[] = []) => {
    const r = await fresh(ng.rpcUrl('mainnet'), { jsonrpc: '2.0', id: id++, method, params });
    assert.equal(r.status, 200, `${method}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    if (r.body.error) throw Object.assign(new Error(`${method}: ${r.body.error.message}`), { rpcError: r.body.error });
    return r.body.result;
  };

  before(async () => {
    ng = await startNodegate({ env: { NODEGATE_WORKERS: '2' }, config: { limits: { unknownKeys: { perSecond: 0.05, burst: BURST } } }, timeoutMs: START_MS });
  });
  after(async () => {
    await ng?.stop();
    await killAll();
    if (ng) rmSync(ng.dataDir, { recursive: true, force: true });
  });

  test('both workers answer, each its own process, with limits kept in the primary', async () => {
    const pids = new Set<number>();
    for (let i = 0; i < 8; i++) {
      const r = await fresh(`${ng.url}/readyz`, undefined, 'GET');
      assert.equal(r.status, 200);
      assert.match(r.body.limits, /^primary/);
      pids.add(r.body.pid);
    }
    console.log(`workers: /readyz answered by ${pids.size} processes (${[...pids].join(', ')}), primary ${ng.pid}`);
    assert.equal(pids.size, 2);
    assert.ok(!pids.has(ng.pid), 'the primary serves no request itself');
  });

  test('30 rounds of send → receipt → nonce and block number on other connections: never older than the receipt', async () => {
    let stale = 0;
    for (let i = 0; i < 30; i++) {
      const hash = await rpc('eth_sendTransaction', [{ from: FROM, to: FROM, value: '0x1' }]);
      let receipt = null;
      while (!receipt) receipt = await rpc('eth_getTransactionReceipt', [hash]);
      const [nonce, block] = await Promise.all([rpc('eth_getTransactionCount', [FROM, 'latest']), rpc('eth_blockNumber')]);
      const sent = await rpc('eth_getTransactionByHash', [hash]);
      if (Number(nonce) <= Number(sent.nonce) || Number(block) < Number(receipt.blockNumber)) stale++;
    }
    console.log(`workers: 30 rounds, ${stale} stale answers (a nonce or a block number older than a receipt already shown)`);
    assert.equal(stale, 0);
  });

  test('a block filter made on one worker polls on both: every new block once, none lost', async () => {
    const filter = await rpc('eth_newBlockFilter');
    const made: string[] = [];
    const seen: string[] = [];
    for (let i = 0; i < 20; i++) {
      const hash = await rpc('eth_sendTransaction', [{ from: FROM, to: FROM, value: '0x1' }]);
      let receipt = null;
      while (!receipt) receipt = await rpc('eth_getTransactionReceipt', [hash]);
      made.push(receipt.blockHash);
      seen.push(...(await rpc('eth_getFilterChanges', [filter])));
    }
    seen.push(...(await rpc('eth_getFilterChanges', [filter])));
    console.log(`workers: a filter polled 21 times on fresh connections reported ${seen.length} blocks for 20 made`);
    assert.deepEqual(seen, made, 'each block once, in order');
    assert.equal(await rpc('eth_uninstallFilter', [filter]), true);
    assert.equal(await rpc('eth_uninstallFilter', [filter]), false, 'gone for both workers');
  });

  test('bad keys from one address, spread over both workers, are refused after the burst in all', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3 * BURST; i++) {
      statuses.push((await fresh(`${ng.url}/v1/mainnet/ngk_${randomBytes(16).toString('hex')}`, { jsonrpc: '2.0', id: 1, method: 'eth_chainId' })).status);
    }
    console.log(`workers: bad keys (burst ${BURST}): ${statuses.join(' ')}`);
    assert.equal(statuses.filter((s) => s !== 429).length, BURST, 'the burst once across the workers, not once each');
    assert.ok(statuses.slice(BURST).every((s) => s === 429));
  });
});

/** Nodegate with two workers in front of an instant node, every account on one plan of `cuPerSecond`. */
async function twoWorkers(plan: string, cuPerSecond: number, burstSeconds: number): Promise<{ node: Server; ng: NodegateProcess }> {
  const instant = await startInstantNode();
  const ng = await startNodegate({
    timeoutMs: START_MS,
    env: { NODEGATE_WORKERS: '2', NODEGATE_LOG_LEVEL: 'warn' },
    config: {
      networks: { mainnet: { chainId: 1, upstream: instant.url } },
      plans: { [plan]: { name: plan, cuPerSecond, cuPerMonth: 1_000_000_000, maxBatchSize: 100 } },
      accounts: { defaultPlan: plan },
      limits: { burstSeconds },
    },
  });
  return { node: instant.server, ng };
}

async function stopTwoWorkers(ng: NodegateProcess | undefined, node: Server | undefined): Promise<void> {
  await ng?.stop();
  await killAll();
  node?.close();
  if (ng) rmSync(ng.dataDir, { recursive: true, force: true });
}

describe('two workers in front of a node: one key gets its per-second limit once, not once per worker', { timeout: 300_000 }, () => {
  let node: Server;
  let ng: NodegateProcess;
  const N = 200;

  before(async () => { ({ node, ng } = await twoWorkers('shared', N, 1)); });
  after(() => stopTwoWorkers(ng, node));

  test('offered 3N for 6 s over fresh connections, the key gets N per second in all (plus the burst)', async () => {
    const perCall = 5; // eth_chainId
    let admitted = 0;
    const { elapsed } = await offerLoad((3 * N) / perCall, 6, async () => {
      const r = await fresh(ng.rpcUrl(), { jsonrpc: '2.0', id: 1, method: 'eth_chainId' });
      if (r.status === 200) admitted += perCall;
      else assert.equal(r.status, 429, 'a refusal is a 429, nothing else');
      return r.status === 200;
    });
    console.log(`workers: N=${N} CU/s, offered ${3 * N} CU/s for ${elapsed.toFixed(1)} s; admitted ${admitted} CU = ${(admitted / elapsed).toFixed(1)} CU/s`);
    assert.ok(admitted >= 0.9 * N * elapsed, `at least 0.9N per second: ${admitted}`);
    assert.ok(admitted <= 1.1 * N * elapsed + N, `at most 1.1N per second plus the burst: ${admitted}`);
  });
});

describe('two workers spending a busy key from their shares of its bucket: the burst once, not once per worker', { timeout: 300_000 }, () => {
  let node: Server;
  let ng: NodegateProcess;
  const RATE = 100;
  const BURST = RATE * 60;

  before(async () => { ({ node, ng } = await twoWorkers('busy', RATE, 60)); });
  after(() => stopTwoWorkers(ng, node));

  test('1,600 calls over fresh connections, 8 at a time: at most the burst and what the rate earned meanwhile', async () => {
    const perCall = 5; // eth_chainId
    const calls = 1600;
    let next = 0;
    let admitted = 0;
    let remainingAbove = 0;
    const start = Date.now();
    const one = async () => {
      while (next++ < calls) {
        const r = await new Promise<{ status: number; remaining: number; limit: number }>((resolve, reject) => {
          const req = httpRequest(ng.rpcUrl(), { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
            res.resume().on('end', () => resolve({ status: res.statusCode!, remaining: Number(res.headers['ratelimit-remaining']), limit: Number(res.headers['ratelimit-limit']) }));
          });
          req.on('error', reject);
          req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }));
        });
        if (r.status === 200) admitted += perCall;
        else assert.equal(r.status, 429, 'a refusal is a 429, nothing else');
        if (r.remaining > r.limit) remainingAbove++;
      }
    };
    await Promise.all(Array.from({ length: 8 }, one));
    const elapsed = (Date.now() - start) / 1000;
    console.log(`workers: a bucket of ${BURST} CU at ${RATE} CU/s, ${calls * perCall} CU asked in ${elapsed.toFixed(1)} s: ${admitted} CU admitted`);
    assert.ok(admitted <= BURST + RATE * elapsed + perCall, `at most the burst and the rate: ${admitted}`);
    // The shares (a sixteenth of the bucket each) the workers hold when the calls end are all that may go unspent.
    assert.ok(admitted >= BURST - BURST / 8, `at least the burst less the shares out: ${admitted}`);
    assert.equal(remainingAbove, 0, 'RateLimit-Remaining never above RateLimit-Limit');
  });
});
