/**
 * The shared cache tier (cache.shared, docs/deployment.md "Shared cache tier"): instances on one Redis pay a node
 * once for an answer that cannot change, keep it across restarts, share one node call for identical calls made at
 * once, drop it when the chain goes back below the finality depth, and answer from memory alone when Redis is gone.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/eventually.ts';
import { rawRedis, REDIS_URL, redisSkipReason, removeKeys, testPrefix } from '../helpers/redis.ts';

const skip = await redisSkipReason('shared cache tier suite');
const hex = (n: number) => '0x' + n.toString(16);
const ADDR = '0x00000000000000000000000000000000000000aa';
const FINALITY = 10;

/**
 * A node whose head the test moves: eth_getBalance answers from the branch the chain is on (a chain that went back
 * below finality built another branch, so a stale answer shows); `count` is what reached it, by method.
 */
class StubNode {
  head = 100;
  branch = 1;
  gate: Promise<void> | undefined;
  private readonly calls = new Map<string, number>();
  private readonly server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', async () => {
      const doc = JSON.parse(body);
      const answer = async (c: { id: number; method: string; params: string[] }) => {
        this.calls.set(c.method, (this.calls.get(c.method) ?? 0) + 1);
        if (c.method === 'eth_getBalance') await this.gate;
        const result = c.method === 'eth_blockNumber' ? hex(this.head)
          : c.method === 'eth_chainId' ? '0x5'
            : c.method === 'eth_getBalance' ? hex(this.branch * 1_000_000 + Number(c.params[1]))
              : null;
        return { jsonrpc: '2.0', id: c.id, result };
      };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(Array.isArray(doc) ? await Promise.all(doc.map(answer)) : await answer(doc)));
    });
  });
  url = '';
  count = (method: string) => this.calls.get(method) ?? 0;
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }
  close() {
    this.server.closeAllConnections();
    this.server.close();
  }
}

describe('instances sharing the cache tier in Redis', { skip, timeout: 300_000 }, () => {
  const node = new StubNode();
  const prefix = testPrefix();
  let instances: TestGateway[] = [];
  const config = (redisUrl = REDIS_URL) => ({
    networks: { stubnet: { chainId: 5, upstream: node.url, finalityDepth: FINALITY } },
    upstreams: { checkIntervalMs: 100 },
    limits: { redisUrl, redisTimeoutMs: 1000 },
    cache: { shared: { enabled: true, redisPrefix: prefix, timeoutMs: 1000 } },
  });
  const start = async (n: number, redisUrl?: string) => {
    instances = await Promise.all(Array.from({ length: n }, () => startTestGateway(config(redisUrl))));
  };
  const stopAll = async () => {
    await Promise.all(instances.map((g) => g.close()));
    instances = [];
  };
  const balanceAt = (g: TestGateway, block: number) => g.call<string>('eth_getBalance', [ADDR, hex(block)], 'stubnet');

  before(async () => {
    await node.start();
    await start(3);
  });
  after(async () => {
    await stopAll();
    node.close();
    await removeKeys(prefix);
  });

  test('the same final reads through every instance cost the node one call each', async () => {
    const before = node.count('eth_getBalance');
    for (const block of [40, 41, 42, 43, 44]) {
      const answers = [];
      for (const g of instances) answers.push(await balanceAt(g, block));
      assert.deepEqual(answers, [1, 2, 3].map(() => hex(1_000_000 + block)), `block ${block}: the same answer from every instance`);
    }
    assert.equal(node.count('eth_getBalance') - before, 5, 'five distinct reads, one node call each, through three instances');
  });

  test('after every instance restarts, the answers are still shared', async () => {
    await stopAll();
    await start(3);
    const before = node.count('eth_getBalance');
    for (const g of instances) assert.equal(await balanceAt(g, 42), hex(1_000_042));
    assert.equal(node.count('eth_getBalance') - before, 0, 'no node call: the answer outlived the instances');
  });

  test('identical calls made at once on every instance reach the node once', async () => {
    let open!: () => void;
    node.gate = new Promise<void>((r) => { open = r; });
    const before = node.count('eth_getBalance');
    try {
      const calls = instances.flatMap((g) => [balanceAt(g, 45), balanceAt(g, 45)]);
      // The first call reached the node (it holds the lease); the others wait for its answer.
      await eventually(() => node.count('eth_getBalance') - before >= 1, 10_000, 'the first call reaches the node');
      open();
      assert.deepEqual(new Set(await Promise.all(calls)), new Set([hex(1_000_045)]));
    } finally {
      open();
      node.gate = undefined;
    }
    assert.equal(node.count('eth_getBalance') - before, 1, 'six calls on three instances, one node call');
  });

  test('the chain going back below the finality depth drops the shared answers', async () => {
    // Block 44's answer is in Redis only (read before the restart): no instance's memory holds it.
    const redis = rawRedis();
    const kept = `${prefix}a:stubnet\u0000eth_getBalance\u0000${JSON.stringify([ADDR, hex(44)])}`;
    try {
      assert.equal(await redis.exists(kept), 1, 'kept in Redis');
      node.branch = 2;
      node.head = 80;
      // The instance that checks the node sees the chain go back (the others take its report) and drops the answers.
      await eventually(() => instances.some((g) => g.gw.networks.get('stubnet')!.head.number === 80), 10_000, 'an instance saw the chain go back');
      for (let gone = false; !gone;) gone = (await redis.exists(kept)) === 0;
    } finally {
      redis.disconnect();
    }
    const before = node.count('eth_getBalance');
    for (const g of instances) assert.equal(await balanceAt(g, 44), hex(2_000_044), 'the new branch, not the answer kept before');
    assert.equal(node.count('eth_getBalance') - before, 1, 'asked once again, then shared');
  });

  test('with Redis unreachable every instance answers right, from its memory', async () => {
    await stopAll();
    await start(2, 'redis://127.0.0.1:1');
    const before = node.count('eth_getBalance');
    for (const g of instances) {
      assert.equal(await balanceAt(g, 30), hex(2_000_030));
      const again = await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [ADDR, hex(30)] }, { network: 'stubnet' });
      assert.deepEqual([again.body.result, again.headers.get('x-cache')], [hex(2_000_030), 'HIT'], 'kept in memory');
    }
    assert.equal(node.count('eth_getBalance') - before, 2, 'one node call per instance: nothing shared, nothing wrong');
  });
});
