/**
 * Webhooks per account are capped by the plan (uncapped, an account can make 250 in 29 s, and every webhook is
 * work on every block). On a plan with `maxWebhooks: 3`, the fourth is refused with 409 and a message naming the cap,
 * also when ten are asked for at once; deleting one makes room.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const api = async (g: TestGateway, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${g.url}/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${g.key}`, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

describe('webhooks per account: the plan caps them', { timeout: 60_000 }, () => {
  let g: TestGateway;
  before(async () => {
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1 } },
      plans: { capped: { name: 'Capped', cuPerSecond: 100_000, cuPerMonth: 1_000_000_000, maxWebhooks: 3 } },
      accounts: { defaultPlan: 'capped' },
      webhooks: { allowPrivateTargets: true },
    });
  });
  after(async () => { await g?.close(); });

  const make = (i: number) => api(g, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: `http://127.0.0.1:9/hook${i}` });

  test('webhook N+1 is refused with 409 naming the cap; deleting one makes room; ten at once make only the room left', async () => {
    const statuses: number[] = [];
    let refused: any;
    for (let i = 0; i < 4; i++) {
      const r = await make(i);
      statuses.push(r.status);
      if (r.status !== 201) refused = r.body;
    }
    console.log(`plan maxWebhooks 3: statuses ${statuses.join(', ')}; refusal ${JSON.stringify(refused)}`);
    assert.deepEqual(statuses, [201, 201, 201, 409]);
    assert.equal(refused.error.code, 'conflict');
    assert.match(refused.error.message, /already has 3 webhooks \(the most its plan allows\)/);
    const hooks = (await api(g, 'GET', '/webhooks')).body.webhooks as Array<{ id: string }>;
    assert.equal(hooks.length, 3);

    assert.equal((await api(g, 'DELETE', `/webhooks/${hooks[0].id}`)).status, 204);
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => make(10 + i)));
    const made = burst.filter((r) => r.status === 201).length;
    console.log(`after one deleted, 10 at once: ${made} made, ${burst.filter((r) => r.status === 409).length} refused`);
    assert.equal(made, 1, 'one slot free: one made');
    assert.equal((await api(g, 'GET', '/webhooks')).body.webhooks.length, 3);
  });
});
