/**
 * The request explorer through the wire: a call made with viem that fails is found by its X-Request-Id within 5 s,
 * through the API and in the dashboard's Requests page, with its method, code, latency and the node that answered;
 * members see their own requests only, the operator anyone's; the operator's switch turns it off.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPublicClient, http } from 'viem';
import { mainnet } from 'viem/chains';
import type { Browser } from 'playwright-core';
import { axeViolations, browserSkip, heading, launchChromium, logIn, openPage } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** Initcode that reverts at once (PUSH1 0, PUSH1 0, REVERT): an eth_call of it fails on the node. */
const REVERTS = '0x60006000fd';

describe('the request explorer', { timeout: 600_000 }, () => {
  let g: TestGateway;
  const ada = { email: 'ada@example.com', password: 'ada-password-1234' };
  let adaKey = '';
  let adaId = '';
  let bobKey = '';
  const api = async (path: string, bearer: string) => {
    const res = await fetch(`${g.url}/api/v1${path}`, { headers: { authorization: `Bearer ${bearer}` } });
    return { status: res.status, body: await res.json() as any };
  };
  /** A viem client on `key` that remembers the X-Request-Id of each response it got. */
  const client = (key: string) => {
    const ids: string[] = [];
    const c = createPublicClient({ chain: mainnet, transport: http(`${g.url}/v1/mainnet/${key}`, { retryCount: 0, onFetchResponse: (res) => { ids.push(res.headers.get('x-request-id')!); } }) });
    return { c, ids };
  };

  before(async () => {
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } } });
    const a = await g.gw.accounts.createAccount({ name: 'Ada', ...ada });
    adaId = a.id;
    adaKey = (await g.gw.accounts.createKey(a.id, { name: "ada's key" })).value;
    const b = await g.gw.accounts.createAccount({ name: 'Bob', email: 'bob@example.com', password: 'bob-password-1234' });
    bobKey = (await g.gw.accounts.createKey(b.id, { name: "bob's key" })).value;
  });
  after(async () => { await g?.close(); });

  test('a reverted call made with viem is found by its X-Request-Id within 5 s, with method, code, latency and node', async () => {
    const { c, ids } = client(adaKey);
    await assert.rejects(c.call({ data: REVERTS }), /revert/i);
    const requestId = ids.at(-1)!;
    assert.ok(requestId, 'the response carried an X-Request-Id');
    const t0 = Date.now();
    const found = await api(`/requests?requestId=${encodeURIComponent(requestId)}`, adaKey);
    const took = Date.now() - t0;
    assert.equal(found.status, 200, JSON.stringify(found.body));
    const [r, ...more] = found.body.requests;
    console.log(`found ${requestId} in ${took} ms: ${JSON.stringify(r)}`);
    assert.ok(took < 5000, `found in ${took} ms`);
    assert.equal(more.length, 0);
    assert.equal(r.method, 'eth_call');
    assert.equal(r.code, 3, 'the node\'s revert code');
    assert.match(r.message, /revert/i);
    assert.equal(typeof r.latencyMs, 'number');
    assert.ok(r.latencyMs >= 0);
    assert.ok(r.node, 'the node that answered is named');
    assert.equal(r.keyName, "ada's key");
    assert.equal(r.network, 'mainnet');
    assert.match(r.params, /60006000fd/);
    assert.ok(r.requestBytes > 0 && r.responseBytes > 0);
  });

  test('an unknown method is found by its request id too, answered by the gateway (no node)', async () => {
    const { c, ids } = client(adaKey);
    await assert.rejects(c.request({ method: 'eth_madeUp' as 'eth_chainId' }));
    const found = await api(`/requests?requestId=${ids.at(-1)}`, adaKey);
    const [r] = found.body.requests;
    assert.deepEqual([r.method, r.code, r.node], ['(invalid)', -32601, null]);
  });

  test('filters and pages: by method and outcome, newest first, a cursor to the next page', async () => {
    const { c } = client(adaKey);
    for (let i = 0; i < 5; i++) await c.getChainId();
    const page1 = await api('/requests?method=eth_chainId&outcome=ok&limit=3', adaKey);
    assert.equal(page1.body.requests.length, 3);
    assert.ok(page1.body.requests.every((r: any) => r.method === 'eth_chainId' && r.code === 0));
    const page2 = await api(`/requests?method=eth_chainId&outcome=ok&limit=3&cursor=${page1.body.nextCursor}`, adaKey);
    assert.ok(page2.body.requests.length >= 2);
    assert.ok(Number(page2.body.requests[0].id) < Number(page1.body.requests[2].id), 'the next page is older');
    const errors = await api('/requests?outcome=error', adaKey);
    assert.deepEqual(errors.body.requests.map((r: any) => r.code).sort(), [-32601, 3]);
    assert.equal((await api('/requests?outcome=bad', adaKey)).status, 400);
  });

  test("a member sees only their account's requests; the operator sees anyone's", async () => {
    const { c, ids } = client(bobKey);
    await c.getBlockNumber();
    const bobs = ids.at(-1)!;
    assert.deepEqual((await api(`/requests?requestId=${bobs}`, adaKey)).body.requests, [], "bob's request is not ada's to see");
    assert.equal((await api(`/requests?requestId=${bobs}`, bobKey)).body.requests.length, 1);
    const op = await fetch(`${g.url}/api/v1/operator/requests?requestId=${bobs}`, {
      headers: { authorization: `Basic ${Buffer.from(`${g.gw.secrets.operatorEmail}:${g.gw.secrets.operatorPassword}`).toString('base64')}` },
    });
    assert.equal(op.status, 200, await op.clone().text());
    assert.equal((await op.json() as any).requests[0].method, 'eth_blockNumber');
  });

  describe('in the dashboard', { skip: browserSkip }, () => {
    let browser: Browser;
    before(async () => { browser = await launchChromium(); });
    after(async () => { await browser?.close(); });

    for (const width of [1280, 390]) {
      test(`at ${width} px: the Requests page finds a failed call by its request id and opens its details`, async () => {
        const { c, ids } = client(adaKey);
        await assert.rejects(c.call({ data: REVERTS }));
        const requestId = ids.at(-1)!;
        const page = await openPage(browser, g.url, width, { bypassCSP: true });
        await logIn(page, g.url, ada.email, ada.password);
        await page.goto(`${g.url}/dashboard/#/requests`);
        await heading(page, 'Requests');
        await page.fill('#request-id', requestId);
        // The page's first list (every request) may still be on its way: the search's answer drawn is what counts.
        const searched = page.waitForResponse((r) => r.url().includes(`requestId=${requestId}`));
        await page.press('#request-id', 'Enter');
        await searched;
        await page.locator('#requests[aria-busy="false"]').waitFor();
        const row = page.locator('#requests-table tbody tr');
        await row.first().waitFor();
        assert.equal(await row.count(), 1);
        const cell = async (label: string) => (await row.first().locator(`td[data-label="${label}"]`).textContent())!.trim();
        assert.equal(await cell('Method'), 'eth_call');
        assert.match(await cell('Outcome'), /^3 /, 'the node\'s revert code, with what it means');
        assert.match(await cell('Latency'), /^\d[\d,]* ms$/);
        assert.match(await cell('Node'), /anvil/, 'the node that answered');
        await row.first().locator('button').click();
        const details = page.locator('#request-details');
        await details.waitFor();
        const shown = (await details.textContent())!;
        assert.match(shown, /revert/i);
        assert.match(shown, /60006000fd/);
        assert.match(shown, new RegExp(requestId));
        assert.deepEqual(await axeViolations(page), []);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 0, `the page is ${overflow} px wider than the screen`);
        assert.deepEqual(page.errors, []);
        await page.context().close();

        // The operator finds the same request among every account's, with the account it belongs to.
        const op = await openPage(browser, g.url, width, { bypassCSP: true });
        await logIn(op, g.url, g.gw.secrets.operatorEmail!, g.gw.secrets.operatorPassword!);
        await op.goto(`${g.url}/dashboard/#/operator/requests`);
        await heading(op, "Everyone's requests");
        await op.fill('#request-id', requestId);
        await op.press('#request-id', 'Enter');
        await op.waitForFunction(() => document.querySelectorAll('#requests-table tbody tr').length === 1);
        assert.equal((await op.locator('#requests-table td[data-label="Account"]').textContent())!.trim(), adaId);
        assert.deepEqual(await axeViolations(op), []);
        assert.deepEqual(op.errors, []);
        await op.context().close();
      });
    }
  });
});

describe('the request explorer turned off by the operator', { timeout: 60_000 }, () => {
  let g: TestGateway;
  before(async () => { g = await startTestGateway({ explorer: { enabled: false } }); });
  after(async () => { await g?.close(); });

  test('records nothing and says so', async () => {
    assert.equal((await g.rpc({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] })).status, 200);
    const res = await fetch(`${g.url}/api/v1/requests`, { headers: { authorization: `Bearer ${g.key}` } });
    assert.equal(res.status, 404);
    assert.match((await res.json() as any).error.message, /turned off/);
    assert.equal(await g.gw.store.requests.countRequests(), 0);
  });
});
