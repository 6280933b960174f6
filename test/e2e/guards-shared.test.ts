import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startInstantNode } from '../helpers/instant-node.ts';
import { freshDatabase, postgresSkipReason } from '../helpers/postgres.ts';
import { redisSkipReason, REDIS_URL } from '../helpers/redis.ts';

/**
 * Three gateways on one PostgreSQL and one Redis (cluster mode) hold an address to the failure guards'
 * burst once in all, not once per instance: bad keys and wrong passwords spread round-robin over the instances are
 * refused as they would be by one. Each test calls from a loopback address of its own (127.x.y.z), so parallel runs
 * on the same Redis do not share buckets.
 */
const skip = (await postgresSkipReason('shared guards suite')) ?? (await redisSkipReason('shared guards suite'));

describe('failure guards shared by three gateways through Redis', { skip }, () => {
  const BURST = 6;
  let node: Server;
  const gateways: TestGateway[] = [];
  const agents: Agent[] = [];

  /** A client address of its own (Linux routes all of 127/8 to loopback). */
  function client(): { address: string; dispatcher: Agent } {
    const address = `127.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(2, 255)}`;
    const dispatcher = new Agent({ localAddress: address, connections: 4 });
    agents.push(dispatcher);
    return { address, dispatcher };
  }

  async function call(from: Agent, g: TestGateway, path: string, body: unknown): Promise<{ status: number; retryAfter?: string; body: any }> {
    const r = await request(g.url + path, { method: 'POST', dispatcher: from, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await r.body.text();
    return { status: r.statusCode, retryAfter: r.headers['retry-after'] as string | undefined, body: text ? JSON.parse(text) : undefined };
  }
  const chainId = { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] };

  before(async () => {
    const instant = await startInstantNode();
    node = instant.server;
    const config = {
      database: { url: await freshDatabase() },
      networks: { mainnet: { chainId: 1, upstream: instant.url } },
      // The login backoff is kept per email in Redis: an operator of this run's own.
      accounts: { operatorEmail: `operator-${randomBytes(6).toString('hex')}@example.com` },
      // A failure earned back every 20 s: none comes back while a test runs. A loaded machine may make Redis answer
      // late; falling back to each instance's own bucket would be the resilience working, not what is measured here.
      limits: { redisUrl: REDIS_URL, redisTimeoutMs: 2000, unknownKeys: { perSecond: 0.05, burst: BURST } },
    };
    // One after the other: the first makes the store's schema, the operator and the demo key.
    // A copy each: loading fills in the raw configuration it is given.
    for (let i = 0; i < 3; i++) gateways.push(await startTestGateway(structuredClone(config)));
  });
  after(async () => {
    for (const a of agents) await a.close();
    for (const g of gateways) await g.close();
    node?.close();
  });

  test('bad keys from one address, round-robin over three instances, are refused after the burst in all; a valid key from it is served', async () => {
    const { address, dispatcher } = client();
    const statuses: number[] = [];
    for (let i = 0; i < 3 * BURST; i++) {
      const r = await call(dispatcher, gateways[i % 3], `/v1/mainnet/ngk_${randomBytes(16).toString('hex')}`, chainId);
      statuses.push(r.status);
      if (r.status === 429) assert.ok(Number(r.retryAfter) >= 1, 'a refusal says when to come back');
    }
    console.log(`bad keys from ${address} over 3 instances (burst ${BURST}): ${statuses.join(' ')}`);
    assert.equal(statuses.filter((s) => s === 401).length, BURST, 'the burst once in all (per instance: 3 x the burst)');
    assert.deepEqual(statuses.slice(BURST), Array(2 * BURST).fill(429));
    for (const g of gateways) {
      const r = await call(dispatcher, g, `/v1/mainnet/${gateways[0].key}`, chainId);
      assert.equal(r.status, 200, 'a valid key is never refused for the failures of its address');
      assert.equal(r.body.result, '0x1');
    }
  });

  test('wrong passwords from one address, round-robin over three instances, back off as on one; the owner elsewhere logs in', async () => {
    const { dispatcher } = client();
    const { operatorEmail: email, operatorPassword: password } = gateways[0].gw.secrets;
    const tries = [];
    for (let i = 0; i < 4; i++) tries.push(await call(dispatcher, gateways[i % 3], '/api/v1/session', { email, password: `wrong-${i}` }));
    console.log(`wrong passwords over 3 instances: ${tries.map((t) => t.status).join(' ')}`);
    assert.deepEqual(tries.map((t) => t.status), [401, 401, 401, 429], 'three failures in a row, wherever they were made, then a wait');
    assert.equal(tries[3].retryAfter, '1');
    assert.match(tries[3].body.error.message, /too many failed logins for this email/);
    const right = await call(dispatcher, gateways[1], '/api/v1/session', { email, password });
    assert.equal(right.status, 429, 'the address that failed waits, even with the right password, on every instance');
    const owner = client();
    const elsewhere = await call(owner.dispatcher, gateways[2], '/api/v1/session', { email, password });
    assert.equal(elsewhere.status, 200, 'an address that has not failed is never held back by the email\'s failures elsewhere');
  });
});
