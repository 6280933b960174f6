/**
 * Webhooks, end to end (through the wire, a real receiver on 127.0.0.1): options refused naming the field, the
 * deliveries view (payload, the receiver's answer, the next retry), redelivery, secret rotation checked by the
 * receiver's own verification, and the account kind `usage.threshold` (no network; its events written to the
 * outbox as the alerts checker writes them, then delivered like any other).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { writeAccountEvent } from '../../src/webhooks/account-events.ts';
import { verify } from '../helpers/webhook-signature.ts';


interface Got { path: string; body: string; json: any; signature: string; eventId: string }

/** A receiver on 127.0.0.1: each path answers what `answers` says for it (200 and no body unless told). */
class Receiver {
  private server!: Server;
  readonly got: Got[] = [];
  readonly answers = new Map<string, { status: number; body: string }>();
  base = '';
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        this.got.push({ path: req.url!, body, json: JSON.parse(body), signature: String(req.headers['nodegate-signature']), eventId: String(req.headers['nodegate-event-id']) });
        const a = this.answers.get(req.url!) ?? { status: 200, body: '' };
        res.writeHead(a.status, { 'content-type': 'text/plain' }).end(a.body);
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.base = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }
  at(path: string): Got[] {
    return this.got.filter((g) => g.path === path);
  }
  close(): void {
    this.server?.close();
  }
}

describe('webhook deliveries, redelivery, secret rotation and usage.threshold', { timeout: 120_000 }, () => {
  let g: TestGateway;
  const receiver = new Receiver();
  const api = async (method: string, path: string, body?: unknown, key = g.key) => {
    const res = await fetch(`${g.url}/api/v1${path}`, {
      method, headers: { authorization: `Bearer ${key}`, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const deliveries = async (id: string) => (await api('GET', `/webhooks/${id}/deliveries?limit=10`)).body.deliveries as any[];
  /** Polls the deliveries view until `check` holds for it (the attempt is recorded just after the receiver answers). */
  const deliveriesUntil = async (id: string, check: (list: any[]) => boolean, what: string) => {
    let list: any[] = [];
    let reading: Promise<void> | undefined;
    await eventually(() => {
      if (list.length > 0 && check(list)) return true;
      reading ??= deliveries(id).then((l) => { list = l; reading = undefined; });
      return false;
    }, 20_000, what);
    return list;
  };

  before(async () => {
    await receiver.start();
    // Failed attempts wait a minute (retryBaseMs): the next retry is visibly in the future.
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } }, webhooks: { allowPrivateTargets: true, retryBaseMs: 60_000, pollMs: 50 } });
  });
  after(async () => {
    await g?.close();
    receiver.close();
  });

  test('options that can never match are refused, naming the field', async () => {
    const url = `${receiver.base}/never`;
    let r = await api('POST', '/webhooks', { network: 'mainnet', kind: 'logs', url, options: { address: '0x123' } });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.error, { code: 'validation_failed', message: 'not an address (0x and 40 hex digits)', field: 'options.address' });
    r = await api('POST', '/webhooks', { network: 'mainnet', kind: 'address.activity', url, options: { addresses: [`0x${'11'.repeat(20)}`, '0x123'] } });
    assert.deepEqual([r.status, r.body.error.field, r.body.error.message], [400, 'options.addresses[1]', 'not an address (0x and 40 hex digits)']);
    r = await api('POST', '/webhooks', { network: 'mainnet', kind: 'logs', url, options: { topics: ['0xddf252ad'] } });
    assert.deepEqual([r.status, r.body.error.field], [400, 'options.topics[0]']);
    // A change is checked against the webhook's kind too.
    const made = await api('POST', '/webhooks', { network: 'mainnet', kind: 'logs', url, options: { address: `0x${'22'.repeat(20)}`, topics: [null] } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    r = await api('PATCH', `/webhooks/${made.body.id}`, { options: { hashes: ['0x1'] } });
    assert.deepEqual([r.status, r.body.error.field, r.body.error.message], [400, 'options.hashes', 'not an option of logs webhooks (it takes address, topics)']);
    assert.deepEqual((await api('GET', `/webhooks/${made.body.id}`)).body.options, { address: `0x${'22'.repeat(20)}`, topics: [null] }, 'unchanged');
    await api('DELETE', `/webhooks/${made.body.id}`);
  });

  test('a failing receiver: the deliveries show the payload, its answer (first 2 KB), the error and the next retry', async () => {
    receiver.answers.set('/down', { status: 503, body: `maintenance until 19:00 ${'x'.repeat(3000)}` });
    const made = (await api('POST', '/webhooks', { kind: 'usage.threshold', url: `${receiver.base}/down` })).body;
    const sent = (await api('POST', `/webhooks/${made.id}/test`)).body.id;
    const [d] = await deliveriesUntil(made.id, (l) => l[0]?.attempts >= 1, 'the first attempt recorded');
    assert.equal(d.eventId, sent);
    assert.deepEqual(d.payload, receiver.at('/down')[0].json, 'the payload is the body the receiver got');
    assert.deepEqual([d.payload.type, d.payload.network, d.deliveredAt, d.attempts], ['webhook.test', null, null, 1]);
    assert.equal(d.lastAttempt.status, 503);
    assert.equal(d.lastAttempt.error, 'the receiver answered HTTP 503');
    assert.ok(d.lastAttempt.responseBody.startsWith('maintenance until 19:00 xxx'), d.lastAttempt.responseBody.slice(0, 40));
    assert.equal(Buffer.byteLength(d.lastAttempt.responseBody), 2048, 'the first 2 KB of the answer');
    assert.equal(typeof d.lastAttempt.durationMs, 'number');
    assert.ok(Date.parse(d.nextAttemptAt) > Date.parse(d.lastAttempt.at) + 20_000, `the next retry is about a minute later: ${d.lastAttempt.at} → ${d.nextAttemptAt}`);
    console.log(`deliveries view of a failing receiver: ${JSON.stringify({ ...d, payload: '…', lastAttempt: { ...d.lastAttempt, responseBody: `${d.lastAttempt.responseBody.slice(0, 30)}…` } })}`);
    await api('DELETE', `/webhooks/${made.id}`);
  });

  test('redeliver sends the same event again; the old record stays', async () => {
    const made = (await api('POST', '/webhooks', { kind: 'usage.threshold', url: `${receiver.base}/again` })).body;
    const sent = (await api('POST', `/webhooks/${made.id}/test`)).body.id;
    await deliveriesUntil(made.id, (l) => l[0]?.deliveredAt !== null, 'the event delivered');
    const r = await api('POST', `/webhooks/${made.id}/deliveries/${sent}/redeliver`);
    assert.equal(r.status, 202);
    assert.match(r.body.eventId, /^evt_re_/);
    await eventually(() => receiver.at('/again').length === 2, 20_000, 'the event received again');
    const [first, second] = receiver.at('/again');
    assert.equal(second.body, first.body, 'the same body (the same event id inside)');
    assert.deepEqual([first.eventId, second.eventId], [sent, r.body.eventId], 'each delivery has its own Nodegate-Event-Id');
    assert.ok(verify(made.secret, second.body, second.signature));
    const list = await deliveriesUntil(made.id, (l) => l.length === 2 && l.every((d) => d.deliveredAt !== null), 'both recorded delivered');
    assert.deepEqual(list.map((d) => d.eventId), [r.body.eventId, sent], 'the copy, newest first, and the original');
    assert.equal((await api('POST', `/webhooks/${made.id}/deliveries/evt_nope/redeliver`)).status, 404);
    await api('DELETE', `/webhooks/${made.id}`);
  });

  test('after rotation the receiver verifies deliveries with the new secret, not the old', async () => {
    const made = (await api('POST', '/webhooks', { kind: 'usage.threshold', url: `${receiver.base}/rotated` })).body;
    const r = await api('POST', `/webhooks/${made.id}/secret`);
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), ['secret'], 'the secret alone');
    assert.match(r.body.secret, /^whsec_/);
    assert.notEqual(r.body.secret, made.secret);
    assert.equal((await api('GET', `/webhooks/${made.id}`)).body.secret, undefined, 'shown once');
    await api('POST', `/webhooks/${made.id}/test`);
    await eventually(() => receiver.at('/rotated').length === 1, 20_000, 'a delivery after the rotation');
    const [got] = receiver.at('/rotated');
    assert.equal(verify(r.body.secret, got.body, got.signature), true, 'signed with the new secret');
    assert.equal(verify(made.secret, got.body, got.signature), false, 'not with the old');
    await api('DELETE', `/webhooks/${made.id}`);
  });

  test('usage.threshold: made without a network; an event written to its outbox is delivered, signed, once', async () => {
    const made = await api('POST', '/webhooks', { kind: 'usage.threshold', url: `${receiver.base}/alerts` });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.deepEqual([made.body.kind, made.body.network, made.body.options], ['usage.threshold', null, {}]);
    assert.equal((await api('POST', '/webhooks', { kind: 'block.mined', url: `${receiver.base}/alerts` })).body.error.field, 'network', 'a chain kind still needs one');
    const accountId = made.body.accountId as string;
    const event = { kind: 'quota', threshold: 90, value: 91.2, period: '2026-11', accountId, at: new Date().toISOString() };
    // As the alerts checker writes it, twice (two instances seeing the same crossing): one event.
    assert.equal(await writeAccountEvent(g.gw.store, accountId, 'usage.threshold', 'quota|90|2026-11', event), 1);
    await writeAccountEvent(g.gw.store, accountId, 'usage.threshold', 'quota|90|2026-11', event);
    g.gw.webhooks!.delivery.poke();
    await eventually(() => receiver.at('/alerts').length === 1, 20_000, 'the usage.threshold event delivered');
    const [got] = receiver.at('/alerts');
    assert.deepEqual([got.json.type, got.json.webhookId, got.json.network, got.json.event], ['usage.threshold', made.body.id, null, event]);
    assert.ok(verify(made.body.secret, got.body, got.signature));
    const list = await deliveriesUntil(made.body.id, (l) => l[0]?.deliveredAt !== null, 'recorded delivered');
    assert.equal(list.length, 1, 'written once');
    await api('DELETE', `/webhooks/${made.body.id}`);
  });

  test('a usage.threshold webhook given a network gets no chain events (the block producer leaves it alone)', async () => {
    // A block.mined webhook witnesses the block: the producer writes a block's events for all webhooks in one batch.
    const witness = (await api('POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: `${receiver.base}/witness` })).body;
    const threshold = await api('POST', '/webhooks', { network: 'mainnet', kind: 'usage.threshold', url: `${receiver.base}/quiet` });
    assert.deepEqual([threshold.status, threshold.body.network], [201, 'mainnet']);
    const mined = await g.gw.networks.get('mainnet')!.chain.call('evm_mine', [], 5000); // anvil directly: the gateway refuses evm_
    assert.equal(mined.error, undefined);
    await eventually(() => receiver.at('/witness').length >= 1, 20_000, 'the block.mined witness got the block');
    assert.deepEqual(await deliveries(threshold.body.id), [], 'nothing written for the usage.threshold webhook');
    assert.equal(receiver.at('/quiet').length, 0);
    for (const id of [witness.id, threshold.body.id]) await api('DELETE', `/webhooks/${id}`);
  });

  test("another account's webhook, its deliveries, redelivery and secret are 404", async () => {
    const made = (await api('POST', '/webhooks', { kind: 'usage.threshold', url: `${receiver.base}/mine` })).body;
    const sent = (await api('POST', `/webhooks/${made.id}/test`)).body.id;
    const other = await g.gw.accounts.createAccount({ name: 'Other', email: 'other-webhooks@example.com' });
    const key = (await g.gw.accounts.createKey(other.id, { name: 'theirs', type: 'Standard' })).value;
    for (const [method, path] of [['GET', `/webhooks/${made.id}/deliveries`], ['POST', `/webhooks/${made.id}/deliveries/${sent}/redeliver`], ['POST', `/webhooks/${made.id}/secret`]] as const) {
      const r = await api(method, path, undefined, key);
      assert.deepEqual([r.status, r.body.error.code], [404, 'not_found'], `${method} ${path}`);
    }
    // Their own webhook cannot redeliver this account's event either.
    const theirs = (await api('POST', '/webhooks', { kind: 'usage.threshold', url: `${receiver.base}/theirs` }, key)).body;
    assert.equal((await api('POST', `/webhooks/${theirs.id}/deliveries/${sent}/redeliver`, undefined, key)).status, 404);
    await eventually(() => receiver.at('/mine').length === 1, 20_000, 'the test event delivered');
    assert.equal(receiver.at('/mine').length, 1, 'nothing redelivered');
    assert.equal(receiver.at('/theirs').length, 0);
    await api('DELETE', `/webhooks/${made.id}`);
  });
});
