/**
 * The limits a socket meets besides its account's compute units: subscriptions per key and per account,
 * capped by the plan (eth_subscribe past them is -32005 naming the cap and the plan, the socket stays open, and an
 * unsubscribe or a closed socket frees the slot); messages per socket per second (the excess of a burst is -32005
 * `message_rate`, traffic after a second is answered, a socket that keeps flooding is closed with 1008); and what
 * /metrics shows of it all (sockets and subscriptions going up and down, notifications, drops by reason), and the
 * notifications in the account's usage.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { WsClient as Client } from '../helpers/ws-client.ts';

const PER_SECOND = 20;
const BURST = 20;

/** Polls `check` (each a /metrics read) until it holds: the server sees a close after the client does. */
async function until(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('WebSocket limits: subscriptions by plan, messages per second, and /metrics', { timeout: 120_000 }, () => {
  let g: TestGateway;
  let wsUrl: (key?: string) => string;
  const clients: Client[] = [];
  const open = async (key?: string) => {
    const c = new Client(wsUrl(key));
    clients.push(c);
    await c.opened;
    return c;
  };
  const metrics = async () => {
    const text = await (await fetch(`${g.url}/metrics`)).text();
    return (line: RegExp) => Number(text.match(line)?.[1]);
  };
  /** Sockets open and subscriptions live now, as /metrics shows them. */
  const gauge = async () => {
    const m = await metrics();
    return { sockets: m(/^nodegate_ws_sockets (\d+)$/m), newHeads: m(/^nodegate_ws_subscriptions\{kind="newHeads"\} (\d+)$/m), logs: m(/^nodegate_ws_subscriptions\{kind="logs"\} (\d+)$/m) };
  };

  before(async () => {
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1 } },
      rpc: { extraMethods: { mainnet: ['anvil_mine'] } },
      plans: { capped: { name: 'Capped', cuPerSecond: 1_000_000, cuPerMonth: 1_000_000_000, subscriptionsPerKey: 2, subscriptionsPerAccount: 3 } },
      accounts: { defaultPlan: 'capped' },
      ws: { messagesPerSecond: PER_SECOND, messageBurst: BURST },
    });
    wsUrl = (key = g.key) => `${g.url.replace(/^http/, 'ws')}/v1/mainnet/${key}`;
  });
  after(async () => {
    for (const c of clients) c.ws.terminate();
    await g?.close();
  });

  test('subscriptions per key and per account are capped by the plan; unsubscribing or closing frees the slot', async () => {
    // An account on the plan (2 per key, 3 per account) with two keys.
    const account = await g.gw.accounts.createAccount({ name: 'capped', email: 'capped@example.com', password: 'capped-password-123' });
    const [one, other] = [(await g.gw.accounts.createKey(account.id, { name: 'one' })).value, (await g.gw.accounts.createKey(account.id, { name: 'other' })).value];
    const a = await open(one);
    const first = await a.ask('eth_subscribe', ['newHeads']);
    const second = await a.ask('eth_subscribe', ['logs', {}]);
    assert.match(first.result, /^0x[0-9a-f]{32}$/);
    assert.match(second.result, /^0x[0-9a-f]{32}$/);
    const third = await a.ask('eth_subscribe', ['newHeads']);
    console.log(`plan subscriptionsPerKey 2: the third eth_subscribe -> ${JSON.stringify(third.error)}`);
    assert.equal(third.error.code, -32005);
    assert.equal(third.error.message, 'too many subscriptions: this key may hold 2 at once on plan Capped; unsubscribe one');
    assert.deepEqual({ ...third.error.data }, { reason: 'subscription_limit', scope: 'key', limit: 2, plan: 'Capped' });
    assert.equal((await a.ask('eth_chainId')).result, '0x1', 'the socket stays open and answers');

    assert.equal((await a.ask('eth_unsubscribe', [first.result])).result, true);
    const again = await a.ask('eth_subscribe', ['newHeads']);
    assert.match(again.result, /^0x[0-9a-f]{32}$/, 'an unsubscribe frees the slot');

    // A second socket of the same key counts toward the key's cap.
    const b = await open(one);
    assert.equal((await b.ask('eth_subscribe', ['newHeads'])).error?.data?.scope, 'key', "the key's third, on another socket");

    // Another key of the same account: its own first, then the account's fourth is refused (3 on the plan).
    const c = await open(other);
    assert.match((await c.ask('eth_subscribe', ['newHeads'])).result, /^0x/, "the account's third, the second key's first");
    const fourth = await c.ask('eth_subscribe', ['newHeads']);
    console.log(`plan subscriptionsPerAccount 3: the account's fourth -> ${fourth.error.message}`);
    assert.equal(fourth.error.code, -32005);
    assert.equal(fourth.error.message, 'too many subscriptions: this account may hold 3 at once on plan Capped; unsubscribe one');

    // Closing the first socket frees its two: the second key subscribes again.
    a.ws.close();
    await a.closed;
    await until(async () => (await gauge()).sockets === 2, 'the first socket closed on the server');
    assert.match((await c.ask('eth_subscribe', ['newHeads'])).result, /^0x/, 'the closed socket freed its slots');
    b.ws.close();
    c.ws.close();
    await Promise.all([b.closed, c.closed]);
  });

  test('a socket closed while its eth_subscribe is still being answered leaves no slot taken', async () => {
    // A client that subscribes and goes at once: the close can reach the server before the subscription is made.
    const account = await g.gw.accounts.createAccount({ name: 'hasty', email: 'hasty@example.com', password: 'hasty-password-123' });
    const key = (await g.gw.accounts.createKey(account.id, { name: 'hasty' })).value;
    for (let i = 0; i < 6; i++) {
      const c = await open(key);
      // Cut once the message is written: the server reads it and the connection's end together.
      c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }), () => c.ws.terminate());
      await c.closed;
    }
    await until(async () => (await gauge()).sockets === 0, 'the hasty sockets closed on the server');
    await until(async () => (await gauge()).newHeads === 0, 'no subscription left of the closed sockets');
    const c = await open(key);
    for (let i = 0; i < 2; i++) assert.match((await c.ask('eth_subscribe', ['newHeads'])).result, /^0x/, `the key's slot ${i + 1} of 2 is free`);
    c.ws.close();
    await c.closed;
  });

  test('messages per socket per second: the excess of a burst is -32005, a second later traffic is answered; a flood is closed', async () => {
    const s = await open();
    const answers = await Promise.all(Array.from({ length: BURST + 15 }, () => s.ask('eth_chainId')));
    const answered = answers.filter((m) => m.result === '0x1');
    const refused = answers.filter((m) => m.error);
    console.log(`${BURST + 15} messages at once on a socket of ${PER_SECOND}/s, burst ${BURST}: ${answered.length} answered, ${refused.length} refused; ${refused[0]?.error.message}`);
    assert.equal(answered.length + refused.length, BURST + 15);
    assert.ok(answered.length >= BURST, 'the burst is answered');
    assert.ok(refused.length >= 5, 'the excess is refused');
    for (const r of refused) {
      assert.equal(r.error.code, -32005);
      assert.equal(r.error.data.reason, 'message_rate');
      assert.match(r.error.message, new RegExp(`this socket may send ${PER_SECOND} messages a second \\(bursts of ${BURST}\\)`));
    }
    // After a second (what the refusal says to wait, and more), messages at the rate are answered.
    await new Promise((r) => setTimeout(r, 1000));
    for (let i = 0; i < 5; i++) assert.equal((await s.ask('eth_chainId')).result, '0x1', `message ${i} after a second`);
    assert.equal(s.ws.readyState, s.ws.OPEN);

    // A socket that keeps sending far past its rate: its refusals pass the same bound, and it is closed.
    const flood = await open();
    for (let i = 0; i < BURST * 4; i++) flood.ws.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] }));
    const closed = await flood.closed;
    console.log(`${BURST * 4} messages at once: closed ${closed.code} "${closed.reason}"`);
    assert.deepEqual(closed, { code: 1008, reason: 'message rate exceeded' });
    const m = await metrics();
    assert.equal(m(/^nodegate_ws_dropped_total\{reason="message_flood"\} (\d+)$/m), 1);
    assert.ok(m(/^nodegate_ws_messages_refused_total (\d+)$/m) >= refused.length + BURST);
    s.ws.close();
    await s.closed;
  });

  test('/metrics: sockets and subscriptions go up and down, notifications are counted by kind, and in the usage', async () => {
    const zero = { sockets: 0, newHeads: 0, logs: 0 };
    await until(async () => (await gauge()).sockets === 0, 'no socket left from the tests before');
    assert.deepEqual(await gauge(), zero);
    const before = (await metrics())(/^nodegate_ws_notifications_total\{kind="newHeads"\} (\d+)$/m);

    const x = await open();
    const y = await open();
    await x.ask('eth_subscribe', ['newHeads']);
    await y.ask('eth_subscribe', ['logs', {}]);
    assert.deepEqual(await gauge(), { sockets: 2, newHeads: 1, logs: 1 });
    await y.ask('anvil_mine', ['0x1']);
    await x.noted();
    const after = (await metrics())(/^nodegate_ws_notifications_total\{kind="newHeads"\} (\d+)$/m);
    console.log(`nodegate_ws_notifications_total{kind="newHeads"}: ${before} -> ${after} after one block`);
    assert.ok(after >= before + 1, 'the notification is counted');

    // The account's usage shows the notifications as `eth_subscription`, with the units they cost (10 each).
    const usage = await (await fetch(`${g.url}/api/v1/analytics`, { headers: { authorization: `Bearer ${g.key}` } })).json();
    const row = usage.byMethod.find((m: { method: string }) => m.method === 'eth_subscription');
    console.log(`usage byMethod eth_subscription: ${JSON.stringify(row)} (${x.notes.length} notifications heard)`);
    assert.deepEqual({ requests: row?.requests, computeUnits: row?.computeUnits }, { requests: x.notes.length, computeUnits: 10 * x.notes.length });
    assert.ok(!/^nodegate_rpc_requests_total\{[^}]*method="eth_subscription"/m.test(await (await fetch(`${g.url}/metrics`)).text()), 'not counted as items answered');

    x.ws.close();
    y.ws.close();
    await Promise.all([x.closed, y.closed]);
    await until(async () => (await gauge()).sockets === 0, 'the two sockets closed on the server');
    assert.deepEqual(await gauge(), zero, 'closed sockets and their subscriptions are no longer counted');
  });
});
