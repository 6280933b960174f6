/**
 * The usage page in Chromium against the analytics routes: filters by method and by outcome (a code,
 * shown with its meaning), a refused call of the key counted, the CSV export of the same selection, and live refresh
 * showing a new call without a click.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip as skip, heading, launchChromium, logIn, openPage } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

describe('the dashboard: usage filters, refusals, CSV and live refresh in Chromium', { timeout: 120_000, skip }, () => {
  let g: TestGateway;
  let browser: Browser;
  const member = { email: 'uma@example.com', password: 'uma-password-1234' };

  before(async () => {
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } } });
    await g.gw.accounts.createAccount({ name: 'Uma', email: member.email, password: member.password });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await g?.close();
  });

  test('a member filters by method and outcome, sees a refused call explained, exports it, and watches it live', async () => {
    const page = await openPage(browser, g.url);
    await logIn(page, g.url, member.email, member.password);
    await page.click('#nav-keys');
    await page.click('#new-key-open');
    await page.fill('#key-name', 'usage key');
    await page.click('#create-key');
    await page.waitForSelector('#new-key-url');
    const url = await page.inputValue('#new-key-url');
    const key = url.slice(url.lastIndexOf('/') + 1);
    const call = (method: string, path = url) => fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }) });
    await call('eth_blockNumber');
    await call('eth_blockNumber');
    await call('eth_chainId');
    // Refused for the key itself: a network that does not exist (404), counted under the key.
    assert.equal((await call('eth_blockNumber', `${g.url}/v1/nowhere/${key}`)).status, 404);

    await page.click('#nav-usage');
    await heading(page, 'Usage');
    await page.waitForFunction(() => document.querySelector('#total-requests')?.textContent === '4');
    assert.match((await page.textContent('#errors'))!, /-32012[\s\S]*unknown network/, 'the refusal, with what its code means');
    // Recorded under names that are not methods: never offered as one.
    const offered = await page.$$eval('#known-methods option', (os) => os.map((o) => (o as HTMLOptionElement).value));
    assert.ok(offered.includes('eth_blockNumber') && !offered.some((m) => m.startsWith('(') || m === 'eth_subscription'), `methods offered: ${offered.join(', ')}`);
    // Typed, without Enter: applied after a short pause, and kept in the page's address.
    await page.fill('#filter-method', 'eth_blockNumber');
    await page.waitForFunction(() => document.querySelector('#total-requests')?.textContent === '2');
    assert.match(await page.evaluate(() => location.hash), /method=eth_blockNumber/);
    assert.ok(await page.isHidden('.notice[role=status]'), 'the gateway took the method filter');
    await page.fill('#filter-method', '');
    await page.selectOption('#filter-status', '-32012');
    await page.waitForFunction(() => document.querySelector('#total-requests')?.textContent === '1');
    const href = (await page.getAttribute('#csv', 'href'))!;
    assert.match(href, /status=-32012/);
    const csv = await page.evaluate(async (h) => (await fetch(h)).text(), href);
    const lines = csv.trim().split(/\r?\n/);
    assert.equal(lines[0], 'time,keyId,keyName,network,method,code,requests,computeUnits,latencyMsAvg');
    assert.equal(lines.length, 2, 'one row: the refused call');
    assert.match(lines[1], /,usage key,\(unknown\),\(refused\),-32012,1,/);

    // Live: a new call appears without a click.
    await page.selectOption('#filter-status', '');
    await page.waitForFunction(() => document.querySelector('#total-requests')?.textContent === '4');
    await page.check('#live');
    await call('eth_chainId');
    await page.waitForFunction(() => document.querySelector('#total-requests')?.textContent === '5', undefined, { timeout: 30_000 });
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});
