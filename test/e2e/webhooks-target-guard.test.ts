/**
 * Webhook targets written as IPv6 forms that carry an IPv4 address (`[::127.0.0.1]`, `[::169.254.169.254]`
 * and `[::a00:1]` among them): refused when the webhook is made, as literals and as names whose DNS answers are
 * such addresses, and at delivery time for a name that turns into one, before any socket opens (injected DNS answers
 * and a connection spy: nothing leaves the machine).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { setTimeout as sleep } from 'node:timers/promises';

const api = async (g: TestGateway, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${g.url}/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${g.key}`, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

/** Each written as one of the IPv4-compatible forms or as one of the other embedded-IPv4 forms of IPv6. */
const LITERALS = [
  'http://[::127.0.0.1]/hook', // IPv4-compatible loopback
  'http://[::169.254.169.254]/latest/meta-data', // IPv4-compatible cloud metadata
  'http://[::a00:1]/hook', // IPv4-compatible 10.0.0.1
  'http://[::ffff:127.0.0.1]/hook', // IPv4-mapped
  'http://[::ffff:0:a9fe:a9fe]/hook', // IPv4-translated (SIIT)
  'http://[64:ff9b::127.0.0.1]/hook', // NAT64
  'http://[64:ff9b:1::a00:1]/hook', // local-use NAT64
  'http://[2002:7f00:1::1]/hook', // 6to4 of 127.0.0.1
  'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook', // Teredo
  'http://[::5db8:d822]/hook', // IPv4-compatible even of a public IPv4 address: a tunnel, not a receiver
];

/** Names whose (injected) AAAA answers are such addresses. */
const DNS: Record<string, string> = {
  'compat.test': '::7f00:1',
  'metadata.test': '::a9fe:a9fe',
  'nat64.test': '64:ff9b::a9fe:a9fe',
  'sixtofour.test': '2002:a9fe:a9fe::1',
  'later.test': '2606:4700::1111', // public when made, inside at delivery time
};

describe('webhook targets: embedded-IPv4 forms of IPv6 refused', { timeout: 60_000 }, () => {
  let g: TestGateway;
  const spy: string[] = [];
  before(async () => {
    g = await startTestGateway(
      { networks: { mainnet: { chainId: 1 } }, webhooks: { allowPrivateTargets: false, retryBaseMs: 50, pollMs: 50 } },
      { webhookNet: { resolve: async (h) => (DNS[h] ? [{ address: DNS[h], family: 6 }] : []), onConnect: (t) => { spy.push(`${t.hostname} ${t.address}`); throw new Error('test spy: no connection'); } } },
    );
  });
  after(async () => { await g?.close(); });

  test('literal addresses and names answering with them are refused with 400 when the webhook is made; no socket opens', async () => {
    const lines: string[] = [];
    for (const url of [...LITERALS, ...Object.keys(DNS).filter((h) => h !== 'later.test').map((h) => `http://${h}/hook`)]) {
      const r = await api(g, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url });
      lines.push(`${r.status} ${url}: ${r.body?.error?.message ?? ''}`);
      assert.equal(r.status, 400, `${url} must be refused`);
      assert.equal(r.body.error.code, 'validation_failed');
      assert.match(r.body.error.message, /webhooks only reach public addresses/);
    }
    console.log(`targets refused:\n  ${lines.join('\n  ')}`);
    assert.match(lines[0], /::7f00:1, a ipv4Compatible address/);
    assert.match(lines[3], /::ffff:7f00:1, a loopback address/);
    assert.deepEqual((await api(g, 'GET', '/webhooks')).body.webhooks, [], 'none was made');
    assert.deepEqual(spy, [], 'no connection was attempted');
  });

  test('a name that answers with an IPv4-compatible loopback address at delivery time is refused then, before any socket', async () => {
    const made = await api(g, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: 'http://later.test/hook' });
    assert.equal(made.status, 201);
    DNS['later.test'] = '::7f00:1';
    await api(g, 'POST', `/webhooks/${made.body.id}/test`);
    // The delivery log is the product's own record of the attempt: polled until it shows one (10 s at most).
    let log: any[] = [];
    for (const end = Date.now() + 10_000; !(log[0]?.attempts >= 1) && Date.now() < end; await sleep(25)) {
      log = (await api(g, 'GET', `/webhooks/${made.body.id}/deliveries`)).body.deliveries;
    }
    console.log(`delivery-time refusal: ${log[0].lastError}`);
    assert.match(log[0].lastError, /later\.test resolves to ::7f00:1, a ipv4Compatible address/);
    assert.deepEqual(spy, [], 'no connection was attempted');
  });
});
