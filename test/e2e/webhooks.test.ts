/**
 * Webhooks through the wire: a real receiver on loopback (allowed by configuration here), events of the
 * embedded chain, signatures checked with the documented snippet, retries in order, a restart that loses nothing,
 * and targets inside the machine refused before any socket opens (injected DNS answers and a connection spy:
 * nothing leaves 127.0.0.0/8).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { encodeFunctionData, keccak256 } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { compileCounter, counterInitCode } from '../helpers/counter.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { verify } from '../helpers/webhook-signature.ts';


/** A receiver on 127.0.0.1 that records what it gets; `answer` decides each status. */
class Receiver {
  server!: Server;
  got: Array<{ body: string; json: any; signature: string }> = [];
  answer: (n: number) => number = () => 200;
  private waiters: Array<() => void> = [];
  url = '';
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; }).on('end', () => {
        const status = this.answer(this.got.length);
        this.got.push({ body, json: JSON.parse(body), signature: String(req.headers['nodegate-signature']) });
        res.writeHead(status).end();
        for (const w of this.waiters.splice(0)) w();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/hook`;
  }
  /** Resolves when `check` holds, re-checked at each delivery (no sleeping). */
  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => {
      const again = () => (check() ? resolve() : this.waiters.push(again));
      this.waiters.push(again);
    });
  }
  close(): void {
    this.server?.close();
  }
}

const api = async (g: TestGateway, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${g.url}/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${g.key}`, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

/**
 * A transaction's receipt, once its block is mined. anvil mines an accepted transaction on its own schedule (and its
 * automine can stall: docs/deployment.md, the watchdog re-arms it), so a receipt asked for right after the send can
 * be null on a loaded machine, even the restart reorganisation test's deploy receipt, before any webhook.
 */
async function receiptOf<T>(gw: TestGateway, hash: string): Promise<T> {
  let receipt: T | null;
  while (!(receipt = await gw.call<T | null>('eth_getTransactionReceipt', [hash]))) await new Promise((r) => setTimeout(r, 20));
  return receipt;
}

describe('webhooks on the embedded chain', { timeout: 120_000 }, () => {
  let g: TestGateway;
  const receiver = new Receiver();
  const connections: string[] = [];
  before(async () => {
    await receiver.start();
    g = await startTestGateway(
      { networks: { mainnet: { chainId: 1 } }, webhooks: { allowPrivateTargets: true, retryBaseMs: 50, pollMs: 50 } },
      { webhookNet: { onConnect: (t) => { connections.push(t.address); if (!t.address.startsWith('127.')) throw new Error(`test spy: no connection to ${t.address}`); } } },
    );
  });
  after(async () => {
    await g?.close();
    receiver.close();
  });

  test('block.mined: each block of a transaction sent, signed; the documented snippet verifies every signature', async () => {
    const made = await api(g, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: receiver.url });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.match(made.body.secret, /^whsec_/);
    assert.equal((await api(g, 'GET', `/webhooks/${made.body.id}`)).body.secret, undefined, 'the secret is shown once');
    const [from] = await g.call<string[]>('eth_accounts');
    const hashes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const tx = await g.call<string>('eth_sendTransaction', [{ from, to: from, value: '0x1' }]);
      hashes.push((await receiptOf<{ blockHash: string }>(g, tx)).blockHash);
    }
    await receiver.until(() => hashes.every((h) => receiver.got.some((d) => d.json.event?.hash === h)));
    const blocks = receiver.got.filter((d) => d.json.type === 'block.mined');
    for (const d of blocks) {
      assert.ok(verify(made.body.secret, d.body, d.signature), 'signature verifies');
      assert.deepEqual(Object.keys(d.json).sort(), ['createdAt', 'event', 'id', 'network', 'type', 'webhookId']);
      assert.equal(d.json.webhookId, made.body.id);
    }
    assert.ok(!verify('whsec_wrong', blocks[0].body, blocks[0].signature), 'and fails with another secret');
    const numbers = blocks.map((d) => Number(d.json.event.number));
    assert.deepEqual(numbers, [...numbers].sort((a, b) => a - b), 'in order');
    assert.equal(new Set(blocks.map((d) => d.json.id)).size, blocks.length, 'each once');
    console.log(`webhooks: ${blocks.length} block.mined deliveries for ${hashes.length} transactions, all signatures verified`);
    await api(g, 'DELETE', `/webhooks/${made.body.id}`);
  });

  test('address.activity and transaction.mined: a watched transaction and a watched address fire once each', async () => {
    const sender = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'); // dev account 1
    const watched = '0x00000000000000000000000000000000000000ab';
    const nonce = Number(await g.call<string>('eth_getTransactionCount', [sender.address, 'pending']));
    const raw = await sender.signTransaction({ chainId: 1, type: 'eip1559', nonce, to: watched, value: 1n, gas: 21_000n, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n });
    const hash = keccak256(raw);
    const tx = (await api(g, 'POST', '/webhooks', { network: 'mainnet', kind: 'transaction.mined', url: receiver.url, options: { hashes: [hash] } })).body;
    const activity = (await api(g, 'POST', '/webhooks', { network: 'mainnet', kind: 'address.activity', url: receiver.url, options: { addresses: [watched] } })).body;
    assert.equal((await api(g, 'POST', '/webhooks', { network: 'mainnet', kind: 'transaction.mined', url: receiver.url })).status, 400, 'a hash to watch is needed');
    const start = receiver.got.length;
    assert.equal(await g.call('eth_sendRawTransaction', [raw]), hash);
    const mined = (d: { json: any }) => d.json.webhookId === tx.id && d.json.event.transaction.hash === hash;
    const touched = (d: { json: any }) => d.json.webhookId === activity.id && d.json.event.activity.some((x: any) => x.hash === hash);
    await receiver.until(() => receiver.got.slice(start).some(mined) && receiver.got.slice(start).some(touched));
    const receipt = await g.call<{ blockHash: string }>('eth_getTransactionReceipt', [hash]);
    const event = receiver.got.slice(start).find(mined)!.json.event;
    assert.equal(event.block.hash, receipt.blockHash);
    assert.equal(event.removed, false);
    assert.ok(verify(tx.secret, receiver.got.slice(start).find(mined)!.body, receiver.got.slice(start).find(mined)!.signature));
    assert.equal(receiver.got.slice(start).filter(mined).length, 1);
    for (const w of [tx, activity]) await api(g, 'DELETE', `/webhooks/${w.id}`);
  });

  test('a receiver that fails 3 times then succeeds gets each event once acknowledged, in order; the deliveries show the attempts', async () => {
    const made = (await api(g, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: receiver.url })).body;
    const start = receiver.got.length;
    receiver.answer = (n) => (n - start < 3 ? 500 : 200);
    const a = (await api(g, 'POST', `/webhooks/${made.id}/test`)).body.id;
    const b = (await api(g, 'POST', `/webhooks/${made.id}/test`)).body.id;
    await receiver.until(() => receiver.got.slice(start).filter((d) => d.json.id === b).length >= 1);
    const seen = receiver.got.slice(start).map((d) => d.json.id);
    assert.deepEqual(seen, [a, a, a, a, b], 'the first event four times (three 500s), the second only after it');
    const log = (await api(g, 'GET', `/webhooks/${made.id}/deliveries`)).body.deliveries;
    const first = log.find((e: any) => e.id === a);
    assert.deepEqual([first.status, first.attempts, first.lastStatus], ['delivered', 4, 200]);
    receiver.answer = () => 200;
    const metrics = await (await fetch(`${g.url}/metrics`)).text();
    const failed = Number(/nodegate_webhook_attempts_total\{outcome="failed"\} (\d+)/.exec(metrics)?.[1]);
    const delivered = Number(/nodegate_webhook_attempts_total\{outcome="delivered"\} (\d+)/.exec(metrics)?.[1]);
    assert.ok(failed >= 3 && delivered >= 2, `/metrics counts the attempts: ${failed} failed, ${delivered} delivered`);
    const timed = Number(/nodegate_webhook_attempt_duration_seconds_count\{outcome="failed"\} (\d+)/.exec(metrics)?.[1]);
    assert.equal(timed, failed, 'each failed attempt timed');
    // Analytics: this webhook's two events, five attempts (three failed), nothing waiting.
    const numbers = (await api(g, 'GET', '/analytics/webhooks')).body.webhooks;
    const mine = numbers.find((w: any) => w.webhookId === made.id);
    assert.deepEqual([mine.events, mine.delivered, mine.attempts, mine.failedAttempts, mine.pending, mine.oldestPendingAt], [2, 2, 5, 3, 0, null]);
    assert.ok(mine.meanDeliveryMs >= 0, 'a mean time to delivery');
    const backlog = Number(/\nnodegate_webhook_backlog_events (\d+)/.exec(metrics)?.[1]);
    assert.equal(backlog, numbers.reduce((a: number, w: any) => a + w.pending, 0), '/metrics shows the backlog the analytics count');
    console.log(`webhooks analytics: ${JSON.stringify(mine)}; backlog ${backlog}`);
    await api(g, 'DELETE', `/webhooks/${made.id}`);
  });

  test('targets inside the machine are refused (the default of a gateway with a node by URL), before any socket opens (injected DNS, connection spy)', async () => {
    const dns: Record<string, string> = { 'inside.test': '127.0.0.1', 'later.test': '93.184.216.34' };
    const spy: string[] = [];
    const strict = await startTestGateway(
      { networks: { mainnet: { chainId: 1 } }, webhooks: { allowPrivateTargets: false, retryBaseMs: 50, pollMs: 50 } },
      { webhookNet: { resolve: async (h) => (dns[h] ? [{ address: dns[h], family: 4 }] : []), onConnect: (t) => { spy.push(t.hostname); throw new Error('test spy: no connection'); } } },
    );
    try {
      const refused: string[] = [];
      for (const url of ['http://127.0.0.1:9/', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/', 'http://inside.test/hook', 'ftp://example.com/', 'http://nowhere.test/']) {
        const r = await api(strict, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url });
        assert.equal(r.status, 400, url);
        refused.push(`${url}: ${r.body.error.message}`);
      }
      console.log(`webhooks refused:\n  ${refused.join('\n  ')}`);
      assert.match(refused[2], /169\.254\.169\.254, a linkLocal address/);
      assert.match(refused[4], /inside\.test resolves to 127\.0\.0\.1, a loopback address/);
      // A name public when set, inside at delivery time: refused then, and still no socket.
      const made = await api(strict, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: 'http://later.test/hook' });
      assert.equal(made.status, 201);
      dns['later.test'] = '10.1.2.3';
      await api(strict, 'POST', `/webhooks/${made.body.id}/test`);
      let log: any[] = [];
      for (let i = 0; i < 200 && !(log[0]?.attempts >= 1); i++) {
        log = (await api(strict, 'GET', `/webhooks/${made.body.id}/deliveries`)).body.deliveries;
        if (!(log[0]?.attempts >= 1)) await new Promise((r) => setTimeout(r, 25));
      }
      assert.match(log[0].lastError, /later\.test resolves to 10\.1\.2\.3, a private address/);
      assert.deepEqual(spy, [], 'no connection was ever attempted');
    } finally {
      await strict.close();
    }
  });

  test('a redirect is followed only to a target that passes the same checks (injected DNS, loopback standing in for the internet)', async () => {
    // hooks.test and moved.test are "public" (their injected addresses are), and are reached on loopback through
    // the test's route; inside.test resolves to loopback itself, so the guard must refuse it.
    const dns: Record<string, string> = { 'hooks.test': '93.184.216.34', 'moved.test': '93.184.216.35', 'inside.test': '127.0.0.1' };
    const dialled: string[] = [];
    let location = '';
    const hits: string[] = [];
    const server = createServer((req, res) => {
      hits.push(`${req.headers.host}${req.url}`);
      req.resume().on('end', () => (req.url === '/old' ? res.writeHead(307, { location }).end() : res.writeHead(200).end()));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const gw = await startTestGateway(
      { networks: { mainnet: { chainId: 1 } }, webhooks: { allowPrivateTargets: false, retryBaseMs: 60_000, pollMs: 50 } },
      { webhookNet: {
        resolve: async (h) => (dns[h] ? [{ address: dns[h], family: 4 }] : []),
        route: (a) => (a.address.startsWith('93.184.216.') ? { address: '127.0.0.1', family: 4 } : a),
        onConnect: (t) => { dialled.push(`${t.hostname}->${t.address}`); if (t.address !== '127.0.0.1') throw new Error(`test spy: no connection to ${t.address}`); },
      } },
    );
    const lastAttempt = async (id: string) => {
      for (let i = 0; i < 400; i++) {
        const [e] = (await api(gw, 'GET', `/webhooks/${id}/deliveries`)).body.deliveries;
        if (e?.attempts >= 1) return e;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('no attempt recorded');
    };
    try {
      const outcomes: string[] = [];
      for (const [to, ok] of [[`http://moved.test:${port}/new`, true], [`http://inside.test:${port}/new`, false], [`http://127.0.0.1:${port}/new`, false], [`http://10.0.0.7:${port}/new`, false]] as const) {
        location = to;
        hits.length = 0;
        const made = await api(gw, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: `http://hooks.test:${port}/old` });
        assert.equal(made.status, 201, JSON.stringify(made.body));
        await api(gw, 'POST', `/webhooks/${made.body.id}/test`);
        const e = await lastAttempt(made.body.id);
        outcomes.push(`${to} -> ${e.status}${e.lastError ? `: ${e.lastError}` : ''}`);
        if (ok) {
          assert.equal(e.status, 'delivered');
          assert.deepEqual(hits, [`hooks.test:${port}/old`, `moved.test:${port}/new`], 'the same POST followed to the new place');
        } else {
          assert.equal(e.status, 'pending');
          assert.match(e.lastError, /^redirected to .*(loopback|private) address/);
          assert.deepEqual(hits, [`hooks.test:${port}/old`], 'nothing reached the place inside');
        }
        await api(gw, 'DELETE', `/webhooks/${made.body.id}`);
      }
      console.log(`webhooks redirects:\n  ${outcomes.join('\n  ')}\n  connections: ${[...new Set(dialled)].join(', ')}`);
      assert.ok(dialled.every((d) => d.endsWith('->127.0.0.1')), 'every socket went to loopback');
      assert.ok(!dialled.some((d) => d.startsWith('inside.test') || d.startsWith('10.')), 'none to a refused place');
    } finally {
      await gw.close();
      server.close();
    }
  });

  for (const restart of [false, true]) {
    test(`a reorganisation sends the dropped block's events again with removed: true, every kind${restart ? ', also when the block was seen before a restart' : ''}`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'nodegate-webhooks-'));
      const cfg = { dataDir, networks: { mainnet: { chainId: 1 } }, webhooks: { allowPrivateTargets: true, retryBaseMs: 50, pollMs: 50 } };
      let gw = await startTestGateway(cfg);
      const rec = new Receiver();
      await rec.start();
      try {
        const [from] = await gw.call<string[]>('eth_accounts');
        const deployed = await gw.call<string>('eth_sendTransaction', [{ from, data: counterInitCode(0) }]);
        const counter = (await receiptOf<{ contractAddress: string }>(gw, deployed)).contractAddress;
        const sender = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a'); // dev account 2
        const nonce = Number(await gw.call<string>('eth_getTransactionCount', [sender.address, 'pending']));
        const raw = await sender.signTransaction({
          chainId: 1, type: 'eip1559', nonce, to: counter as `0x${string}`, data: encodeFunctionData({ abi: compileCounter().abi, functionName: 'increment' }),
          gas: 100_000n, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n,
        });
        const hash = keccak256(raw);
        const hooks: Record<string, string> = {};
        for (const [kind, options] of [['block.mined', {}], ['logs', { address: counter }], ['address.activity', { addresses: [sender.address] }], ['transaction.mined', { hashes: [hash] }]] as const) {
          const r = await api(gw, 'POST', '/webhooks', { network: 'mainnet', kind, url: rec.url, options });
          assert.equal(r.status, 201, JSON.stringify(r.body));
          hooks[r.body.id] = kind;
        }
        await gw.call('eth_sendRawTransaction', [raw]);
        const dropped = (await receiptOf<{ blockHash: string }>(gw, hash)).blockHash;
        const blockOf = (d: { json: any }) => d.json.event.hash ?? d.json.event.block?.hash;
        const of = (removed: boolean) => () => Object.keys(hooks).every((id) => rec.got.some((d) => d.json.webhookId === id && blockOf(d) === dropped && d.json.event.removed === removed));
        await rec.until(of(false));
        if (restart) {
          await gw.close();
          gw = await startTestGateway(cfg);
        }
        // The block is replaced: anvil rolls back one block and mines a longer branch.
        const node = (method: string, params: unknown[]) => gw.gw.networks.get('mainnet')!.chain.call(method, params, 5000);
        assert.equal((await node('anvil_rollback', [1])).error, undefined);
        await node('evm_mine', []);
        await node('evm_mine', []);
        await rec.until(of(true));
        const kinds: string[] = [];
        for (const [id, kind] of Object.entries(hooks)) {
          const first = rec.got.find((d) => d.json.webhookId === id && blockOf(d) === dropped && !d.json.event.removed)!.json.event;
          const again = rec.got.find((d) => d.json.webhookId === id && blockOf(d) === dropped && d.json.event.removed)!.json.event;
          const strip = (e: any) => JSON.stringify({ ...e, removed: undefined, logs: e.logs?.map((l: any) => ({ ...l, removed: undefined })), activity: e.activity?.map((a: any) => ({ ...a, removed: undefined })), transaction: e.transaction && { ...e.transaction, removed: undefined } });
          assert.equal(strip(again), strip(first), `${kind}: the same event, removed`);
          kinds.push(kind);
        }
        console.log(`webhooks reorg${restart ? ' after a restart' : ''}: removed events for ${kinds.join(', ')}`);
      } finally {
        await gw.close();
        rec.close();
      }
    });
  }

  test('delivered events past webhooks.retentionDays leave the outbox; events still waiting stay', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'nodegate-webhooks-'));
    // pollMs long: this gateway's deliverer does not touch the events the test writes and settles itself.
    const cfg = { dataDir, networks: { mainnet: { chainId: 1 } }, webhooks: { allowPrivateTargets: true, pollMs: 60_000, retentionDays: 1 } };
    const first = await startTestGateway(cfg);
    const made = (await api(first, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: 'http://127.0.0.1:9/hook' })).body;
    const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
    const store = first.gw.store;
    await store.webhookEvents.addWebhookEvents(['old', 'recent', 'waiting'].map((id, i) => ({ id, webhookId: made.id, type: 'block.mined', body: '{}', createdAt: daysAgo(3 - i) })));
    for (const [id, at] of [['old', daysAgo(2)], ['recent', daysAgo(0.5)]]) {
      const [e] = await store.webhookEvents.claimWebhookEvents('test', new Date().toISOString(), daysAgo(-1), 1);
      assert.equal(e.id, id);
      await store.webhookEvents.recordWebhookAttempt(id, 'test', { delivered: true, status: 200, error: null, at, nextAttemptAt: at });
    }
    await first.close();
    const again = await startTestGateway(cfg);
    try {
      const ids = async () => (await api({ ...again, key: first.key }, 'GET', `/webhooks/${made.id}/deliveries`)).body.deliveries.map((d: any) => `${d.id}:${d.status}`);
      for (let i = 0; i < 100 && (await ids()).includes('old:delivered'); i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(await ids(), ['waiting:pending', 'recent:delivered'], 'delivered two days ago: dropped at start; half a day ago: kept; waiting: kept');
    } finally {
      await again.close();
    }
  });

  test('events of blocks mined while the receiver is down, or before a restart, are all delivered after it, none twice', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'nodegate-webhooks-'));
    const cfg = { dataDir, networks: { mainnet: { chainId: 1 } }, webhooks: { allowPrivateTargets: true, retryBaseMs: 50, pollMs: 50 } };
    const first = await startTestGateway(cfg);
    // Nothing listens at the target yet: every delivery fails and stays in the outbox.
    const made = (await api(first, 'POST', '/webhooks', { network: 'mainnet', kind: 'block.mined', url: 'http://127.0.0.1:9/hook' })).body;
    const [from] = await first.call<string[]>('eth_accounts');
    const blocks: string[] = [];
    for (let i = 0; i < 3; i++) {
      const tx = await first.call<string>('eth_sendTransaction', [{ from, to: from, value: '0x1' }]);
      blocks.push((await receiptOf<{ blockHash: string }>(first, tx)).blockHash);
    }
    // Stopped at once: some blocks may not even have their events written yet.
    await first.close();
    const back = new Receiver();
    await back.start();
    const again = await startTestGateway(cfg);
    try {
      await again.gw.store.webhooks.updateWebhook(made.id, { url: back.url });
      again.gw.webhooks!.delivery.poke();
      await back.until(() => blocks.every((h) => back.got.some((d) => d.json.event?.hash === h)));
      const ids = back.got.map((d) => d.json.id);
      console.log(`webhooks across a restart: ${blocks.length} blocks mined, ${ids.length} events delivered after it`);
      assert.equal(new Set(ids).size, ids.length, 'none twice');
    } finally {
      await again.close();
      back.close();
    }
  });
});
