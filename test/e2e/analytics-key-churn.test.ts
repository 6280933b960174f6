/**
 * Key churn is not a row factory, through the wire: an account that makes a key, calls with it and revokes it, again
 * and again, writes usage rows for at most `analytics.maxKeysPerAccountMinute` keys a minute; the calls of the
 * rest are counted (nothing is lost) under the key `(other)`, their methods kept.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const KEYS = 60;
const METHODS = ['eth_chainId', 'eth_blockNumber', 'net_version'];

describe('usage rows under key churn', { timeout: 180_000 }, () => {
  let g: TestGateway;
  before(async () => {
    g = await startTestGateway({ analytics: { flushMs: 200 } });
  });
  after(async () => g?.close());

  async function api(method: string, path: string, key: string, body?: unknown) {
    const res = await fetch(`${g.url}/api/v1${path}`, {
      method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? '' : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() as any };
  }

  test(`${KEYS} keys made, used with ${METHODS.length} methods and revoked: rows for at most maxKeysPerAccountMinute keys, every call counted`, async () => {
    const account = await g.gw.accounts.createAccount({ name: 'churner', email: 'churner@example.com' });
    const admin = (await g.gw.accounts.createKey(account.id, { name: 'admin', type: 'Restricted', permissions: ['admin'] })).value;
    // The account is new: all its rows are this test's.
    const from = new Date(Date.now() - 3_600_000).toISOString();
    // The bound is per minute: the churn (about a second) starts early in one, so its rows are one minute's.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 20_000) await new Promise((r) => setTimeout(r, left + 50));
    const t0 = performance.now();
    for (let i = 0; i < KEYS; i++) {
      const made = await api('POST', '/keys', admin, { name: `churn-${i}` });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      for (const method of METHODS) await g.rpc({ jsonrpc: '2.0', id: 1, method, params: [] }, { key: made.body.value });
      assert.equal((await api('POST', `/keys/${made.body.id}/revoke`, admin)).status, 200);
    }
    const seconds = (performance.now() - t0) / 1000;
    // Flushed every 200 ms: read until every call is in.
    const read = () => g.gw.store.usage.listUsageMinutes({ from, to: new Date(Date.now() + 60_000).toISOString(), accountId: account.id });
    let rows = await read();
    for (let i = 0; i < 50 && rows.reduce((n, r) => n + r.requests, 0) < KEYS * METHODS.length; i++) {
      await new Promise((r) => setTimeout(r, 200));
      rows = await read();
    }
    const minutes = new Set(rows.map((r) => r.minute)).size;
    const perMinute = Math.max(...[...new Set(rows.map((r) => r.minute))].map((m) => rows.filter((r) => r.minute === m).length));
    const requests = rows.reduce((n, r) => n + r.requests, 0);
    const keysWithRows = new Set(rows.map((r) => r.keyId));
    console.log(`key churn: ${KEYS} keys x ${METHODS.length} methods in ${seconds.toFixed(1)} s over ${minutes} minute(s): ${rows.length} usage rows, `
      + `at most ${perMinute} in one minute (one row per key and method before: ${KEYS * METHODS.length}); ${keysWithRows.size} key ids; ${requests} calls counted`);
    assert.equal(requests, KEYS * METHODS.length, 'every call is counted');
    const bound = g.gw.config.analytics.maxKeysPerAccountMinute;
    assert.ok(perMinute <= (bound + 1) * METHODS.length * 2, `at most ${bound} keys and (other) per minute, each with its methods and outcomes`);
    assert.ok(rows.length <= minutes * (bound + 1) * METHODS.length * 2, `at most ${bound} keys and (other) in each of the ${minutes} minute(s) it spanned`);
    assert.ok(minutes > 1 || rows.length < KEYS * METHODS.length / 2, 'far fewer rows than one per key and method');
    assert.ok([...keysWithRows].some((k) => k.startsWith('(other):')), 'the rest counted under (other)');
  });
});
