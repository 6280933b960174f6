/**
 * Notifications under the account's plan: each delivered event is charged to the monthly quota as a call is, and
 * once the month is spent the socket is closed (1008, the quota named) instead of delivering for free, and a
 * resubscribe is refused for the month (-32005); a plan changed
 * under live subscriptions applies to them within about keyCacheTtlMs + 1 s: the newest past the new caps end
 * (their sockets closed 1008, the cap named), the rest keep delivering, and their events are charged to the new
 * plan's quota.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, TEST_PLAN, type TestGateway } from '../helpers/gateway.ts';
import { openWs, type WsClient } from '../helpers/ws-client.ts';

const MONTH = 300;
const plan = (name: string, more: Record<string, number>) => ({ name, cuPerSecond: 1_000_000, cuPerMonth: 1_000_000_000, maxBatchSize: 100, ...more });

describe('notifications and the plan: the monthly quota, and a plan changed under live subscriptions', { timeout: 120_000 }, () => {
  let g: TestGateway;
  const clients: WsClient[] = [];
  const wsUrl = (key: string) => `${g.url.replace(/^http/, 'ws')}/v1/mainnet/${key}`;
  const open = async (key: string) => {
    const c = await openWs(wsUrl(key));
    clients.push(c);
    return c;
  };
  /** One block, mined by the demo account (its plan has no limit these tests meet). */
  const mine = () => g.call('anvil_mine', ['0x1']);
  const newAccount = async (name: string, planId: string) => {
    const account = await g.gw.accounts.createAccount({ name, email: `${name}@example.com`, password: `${name}-password-123`, planId });
    return { account, key: (await g.gw.accounts.createKey(account.id, { name })).value };
  };

  before(async () => {
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1 } },
      rpc: { extraMethods: { mainnet: ['anvil_mine'] } },
      plans: {
        test: TEST_PLAN,
        metered: plan('Metered', { cuPerMonth: MONTH }),
        wide: plan('Wide', { subscriptionsPerKey: 100, subscriptionsPerAccount: 100 }),
        ten: plan('Ten', { subscriptionsPerKey: 10, subscriptionsPerAccount: 10 }),
        spent: plan('Spent', { cuPerMonth: 1, subscriptionsPerKey: 10, subscriptionsPerAccount: 10 }),
      },
      accounts: { defaultPlan: 'test' },
    });
  });
  after(async () => {
    for (const c of clients) c.ws.terminate();
    await g?.close();
  });

  test('events are charged to the monthly quota: once it is spent the socket closes 1008, and a resubscribe is refused for the month', async () => {
    const { key } = await newAccount('metered', 'metered');
    const c = await open(key);
    assert.match((await c.ask('eth_subscribe', ['newHeads'])).result, /^0x[0-9a-f]{32}$/);
    let mined = 0;
    while (!c.ended && mined < 40) {
      const heard = c.notes.length;
      await mine();
      mined++;
      await eventually(() => c.notes.length > heard || c.ended !== undefined, 5000, `block ${mined} announced or the socket closed`);
    }
    const usage = await (await fetch(`${g.url}/api/v1/analytics`, { headers: { authorization: `Bearer ${key}` } })).json();
    const spent = usage.byMethod.reduce((n: number, m: { computeUnits: number }) => n + m.computeUnits, 0);
    console.log(`plan of ${MONTH} CU a month: ${c.notes.length} newHeads of ${mined} blocks delivered, ${spent} CU spent; socket ${JSON.stringify(c.ended)}`);
    assert.deepEqual(c.ended, { code: 1008, reason: `monthly quota of ${MONTH} compute units spent (plan Metered)` });
    assert.ok(c.notes.length < mined, 'not every block was delivered');
    assert.ok(spent <= MONTH, `no more than the month's quota spent: ${spent}`);
    // A client that reconnects and subscribes again is told why, as any call over the month is.
    const again = await (await open(key)).ask('eth_subscribe', ['newHeads']);
    assert.equal(again.error?.code, -32005);
    assert.equal(again.error?.data?.window, 'month');
    const m = await (await fetch(`${g.url}/metrics`)).text();
    assert.match(m, /^nodegate_ws_dropped_total\{reason="quota_spent"\} 1$/m);
  });

  test('a move to a plan of 10 subscriptions per key ends the 15 newest of 25; the 10 oldest keep delivering, then stop when the new plan\'s quota is spent', async () => {
    const { account, key } = await newAccount('mover', 'wide');
    const sockets: WsClient[] = [];
    for (let i = 0; i < 25; i++) {
      const c = await open(key);
      assert.match((await c.ask('eth_subscribe', ['newHeads'])).result, /^0x/, `subscription ${i + 1} of 25 on plan Wide`);
      sockets.push(c);
    }
    await mine();
    await eventually(() => sockets.every((c) => c.notes.length >= 1), 5000, 'all 25 hear a block on plan Wide');

    const moved = Date.now();
    await g.gw.accounts.updateAccount(account.id, { planId: 'ten' });
    await eventually(() => sockets.filter((c) => c.ended).length >= 15, 5000, 'the 15 newest closed');
    const within = Date.now() - moved;
    const ended = sockets.map((c) => c.ended !== undefined);
    console.log(`moved to plan Ten (10 per key): ${ended.filter(Boolean).length} of 25 sockets closed within ${within} ms; first closed reason: ${sockets[24].ended?.reason}`);
    assert.deepEqual(ended, [...Array(10).fill(false), ...Array(15).fill(true)], 'the 15 newest ended, the 10 oldest kept');
    for (const c of sockets.slice(10)) assert.deepEqual(c.ended, { code: 1008, reason: 'subscription limit: 10 per key on plan Ten' });
    const heard = sockets.map((c) => c.notes.length);
    await mine();
    await eventually(() => sockets.slice(0, 10).every((c, i) => c.notes.length > heard[i]), 5000, 'the 10 kept hear the next block');
    assert.deepEqual(sockets.slice(10).map((c, i) => c.notes.length - heard[10 + i]), Array(15).fill(0), 'the ended hear nothing more');
    const c11 = await open(key);
    assert.equal((await c11.ask('eth_subscribe', ['newHeads'])).error?.data?.scope, 'key', 'an 11th is refused by the new plan');

    // The new plan's quota applies to the kept ones too: on a plan whose month is spent, the next event ends them.
    await g.gw.accounts.updateAccount(account.id, { planId: 'spent' });
    await new Promise((r) => setTimeout(r, 2500)); // keyCacheTtlMs (1 s) + the sockets' key check (1 s)
    await mine();
    await eventually(() => sockets.slice(0, 10).every((c) => c.ended), 5000, 'the 10 kept closed at the next event on plan Spent');
    assert.deepEqual(sockets[0].ended, { code: 1008, reason: 'monthly quota of 1 compute units spent (plan Spent)' });
  });
});
