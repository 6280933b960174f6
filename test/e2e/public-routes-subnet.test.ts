/**
 * The routes without authentication (sign-up, password reset, invitation acceptance) are bounded per /24 and /64
 * as well as per address, through the wire: clients act as many addresses by binding their sockets to 127.0.x.y
 * (loopback covers the whole /8 on Linux), as sessions-logins.test.ts does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

describe('public routes bounded per subnet', { timeout: 180_000 }, () => {
  let g: TestGateway;
  const agents = new Map<string, Agent>();
  const from = (address: string) => {
    let a = agents.get(address);
    if (!a) agents.set(address, (a = new Agent({ localAddress: address, connections: 4 })));
    return a;
  };
  async function post(address: string, path: string, body: unknown): Promise<number> {
    const r = await request(g.url + path, { method: 'POST', dispatcher: from(address), headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await r.body.text();
    return r.statusCode;
  }

  before(async () => {
    g = await startTestGateway({ accounts: { openSignup: true } });
  });
  after(async () => {
    for (const a of agents.values()) await a.close();
    await g?.close();
  });

  test('sign-ups from ten addresses of one /24 are refused past the subnet bound; another /24 still signs up', async () => {
    const statuses: number[] = [];
    let n = 0;
    const t0 = performance.now();
    for (let round = 0; round < 3; round++) {
      for (let i = 1; i <= 10; i++) {
        statuses.push(await post(`127.0.40.${i}`, '/api/v1/signup', { name: `Bot ${++n}`, email: `bot${n}@example.com`, password: 'a long enough password' }));
      }
    }
    const made = statuses.filter((s) => s === 201).length;
    const refused = statuses.filter((s) => s === 429).length;
    console.log(`30 sign-ups from 10 addresses of one /24 in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${made} accounts made, ${refused} refused (429)`);
    assert.equal(made, 10);
    assert.equal(refused, 20);
    assert.equal(await post('127.0.41.1', '/api/v1/signup', { name: 'Elsewhere', email: 'elsewhere@example.com', password: 'a long enough password' }), 201);
  });

  test('password reset requests from ten addresses of one /24, each under its own bound, are refused past the subnet bound', async () => {
    const statuses: number[] = [];
    for (let round = 0; round < 8; round++) {
      for (let i = 1; i <= 10; i++) statuses.push(await post(`127.0.42.${i}`, '/api/v1/password-reset', { email: `someone${round}-${i}@example.com` }));
    }
    const answered = statuses.filter((s) => s === 202).length;
    const refused = statuses.filter((s) => s === 429).length;
    console.log(`80 reset requests from 10 addresses of one /24 (8 each, under the address's 30): ${answered} answered, ${refused} refused (429)`);
    // 60 at once, and one more every 5 s while they are sent.
    assert.ok(answered >= 60 && answered <= 65, `${answered} answered`);
    assert.equal(refused, 80 - answered);
    assert.equal(await post('127.0.43.1', '/api/v1/password-reset', { email: 'someone@example.com' }), 202, 'another /24 is answered');
  });
});
