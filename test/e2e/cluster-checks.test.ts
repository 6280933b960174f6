/**
 * Health checks once per cluster: three instances each checking one node check it three times over (4
 * calls/s become 11). In cluster mode one instance holds a lease and checks; the others take its report from Redis.
 * When that instance stops, another takes the lease and the node is still checked.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { redisSkipReason, REDIS_URL } from '../helpers/redis.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const skip = await redisSkipReason('cluster checks suite');

/** A node at block 100 that counts the calls it gets (the instances' checks: no client calls here). */
async function countingNode(): Promise<{ url: string; server: Server; calls: () => number }> {
  let calls = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; }).on('end', () => {
      const parsed = JSON.parse(body);
      const answer = (m: { id: unknown; method: string }) => {
        calls++;
        const result = m.method === 'eth_chainId' ? '0x1' : m.method === 'eth_blockNumber' ? '0x64' : null;
        return { jsonrpc: '2.0', id: m.id, result };
      };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server, calls: () => calls };
}

const windowOf = async (node: { calls: () => number }, ms: number) => {
  const c0 = node.calls();
  await new Promise((r) => setTimeout(r, ms));
  return ((node.calls() - c0) * 1000) / ms;
};

describe('three instances on one Redis check a node once, not three times', { skip }, () => {
  let node: Awaited<ReturnType<typeof countingNode>>;
  let alone: Awaited<ReturnType<typeof countingNode>>;
  const gateways: TestGateway[] = [];
  before(async () => {
    node = await countingNode();
    alone = await countingNode();
  });
  after(async () => {
    for (const g of gateways) await g.close().catch(() => {});
    node?.server.close();
    alone?.server.close();
  });

  test('the node gets one instance\'s checks; another instance takes over when the checking one stops', async () => {
    const config = (url: string, redis: boolean) => ({
      networks: { mainnet: { chainId: 1, upstream: url } },
      // Every round, called or not (an instance alone slows down while idle; instances sharing a head do not).
      upstreams: { checkIntervalMs: 200, idleCheckMs: 0 },
      ...(redis ? { limits: { redisUrl: REDIS_URL, redisTimeoutMs: 2000 } } : {}),
    });
    // One instance alone, without Redis: what one instance's checks cost a node.
    const single = await startTestGateway(config(alone.url, false));
    gateways.push(single);
    const one = await windowOf(alone, 2000);
    await single.close();
    gateways.length = 0;
    for (let i = 0; i < 3; i++) gateways.push(await startTestGateway(config(node.url, true)));
    const three = await windowOf(node, 2000);
    console.log(`# node calls per second from checks: one instance ${one.toFixed(1)}, three instances sharing a lease ${three.toFixed(1)}`);
    assert.ok(one > 0, 'one instance checks the node');
    assert.ok(three <= one * 1.5, `three instances check about as often as one (${three.toFixed(1)} vs ${one.toFixed(1)} calls/s)`);
    // Whichever holds the lease stops: within its lease (3 intervals, at least 1.5 s) another checks.
    await gateways[0].close();
    await gateways[1].close();
    await gateways[2].close();
    gateways.length = 0;
    const again: TestGateway[] = [];
    for (let i = 0; i < 2; i++) again.push(await startTestGateway(config(node.url, true)));
    gateways.push(...again);
    await gateways[0].close();
    gateways.shift();
    await new Promise((r) => setTimeout(r, 1600));
    const after = await windowOf(node, 1000);
    console.log(`# after the first instance stopped: ${after.toFixed(1)} calls/s from the one left`);
    assert.ok(after > 0, 'the instance left checks the node once the lease ran out');
    const ready = await fetch(`${gateways[0].url}/readyz`);
    const body = await ready.json();
    assert.equal(ready.status, 200, 'the instances that do not check are ready too');
    assert.deepEqual(body.upstreams.map((u: { state: string; head: number }) => [u.state, u.head]), [['up', 100]], 'with the node up at its head');
  });
});
