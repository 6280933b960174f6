/**
 * The dashboard's pages as a member and the operator meet them, in Chromium at 1280 and 390 px:
 * - numbers where people look first: the overview's plan in words, the quota ("unlimited" on the developer plan), the
 *   last 24 hours and the month per key and network with errors, their rate, median and p99; a key's own numbers and
 *   its "Last used" right after a successful call;
 * - lists first, "New …" behind a button, a form emptied after a create; a 200-character name that does not widen
 *   the page; rules shown in the list; every bad IP named; no key made already expired; revoked keys out of the list;
 * - the operator: no Suspend on their own row, the plan new accounts get preselected, the usage by account with a
 *   link to each, plans deleted in the page and a refusal (409) said in its row, a suspended member told so;
 * - the login's focus on the email, `/dashboard/settings` and `/` opened directly, a gateway without mail saying so,
 *   loopback webhooks on the development default, webhook options in words, an invitation naming account and role.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, browserSkip as skip, heading, launchChromium, logIn, openPage, type Watched } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

if (skip) console.log(`dashboard pages: ${skip}`);

describe('the dashboard pages of a member and of the operator in Chromium', { timeout: 600_000, skip }, () => {
  let g: TestGateway;
  let browser: Browser;
  let memberId: string;
  const member = { name: 'Mira', email: 'mira@example.com', password: 'mira-password-123' };
  const operator = () => ({ email: g.gw.secrets.operatorEmail!, password: g.gw.secrets.operatorPassword! });
  const settled = (page: Page) => page.waitForFunction(() => document.querySelector('main')?.getAttribute('aria-busy') === 'false');
  const rpc = (url: string, method: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }) });

  before(async () => {
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } }, webhooks: { pollMs: 50 } });
    memberId = (await g.gw.accounts.createAccount({ name: member.name, email: member.email, password: member.password, planId: 'developer' })).id;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await g?.close();
  });

  async function signedIn(email: string, password: string, width = 1280): Promise<Watched> {
    const page = await openPage(browser, g.url, width, { bypassCSP: true });
    await logIn(page, g.url, email, password);
    return page;
  }

  test("a member's numbers: the overview and a key's page, with Last used after a successful call", async () => {
    const { key, value } = await g.gw.accounts.createKey(memberId, { name: 'numbers key' });
    const url = `${g.url}/v1/mainnet/${value}`;
    assert.equal((await rpc(url, 'eth_blockNumber')).status, 200);
    assert.equal((await rpc(url, 'eth_chainId')).status, 200);
    assert.equal(((await (await rpc(url, 'eth_nothingHere')).json()) as { error: { code: number } }).error.code, -32601);

    const page = await signedIn(member.email, member.password);
    await settled(page);
    assert.equal(await page.textContent('#usage-summary-day-requests'), '3', 'the last 24 hours');
    assert.equal(await page.textContent('#usage-summary-day-errors'), '1 (33.3 %)', 'errors with their share');
    assert.match((await page.textContent('#usage-summary-day-p50'))!, /^≤ [\d,]+ ms$/, 'the median as the bound of its latency bucket');
    assert.match((await page.textContent('#usage-summary-day-p99'))!, /^(≤ [\d,]+|over 2,500) ms$/);
    assert.equal(await page.textContent('#usage-summary-month-requests'), '3', 'this month');
    assert.match((await page.textContent('#usage-summary-day-by-key'))!, /numbers key/, 'per key');
    assert.match((await page.textContent('#usage-summary-month-by-network'))!, /mainnet/, 'per network');
    const quota = (await page.textContent('#plan-quota'))!;
    assert.match(quota, /the quota is unlimited/, 'the developer plan in words a person reads');
    assert.doesNotMatch(quota, /trillion|quadrillion/);
    assert.match((await page.textContent('#plan-limits'))!, /Compute units per second \(per account\): 1 million/, 'the limits in words');
    assert.equal(await page.textContent('label[for="http-mainnet"]'), 'HTTP endpoint', 'an http:// URL is not called HTTPS');

    await page.goto(`${g.url}/dashboard/#/keys/${key.id}`);
    await heading(page, 'Key “numbers key”');
    await settled(page);
    assert.equal(await page.textContent('#key-usage-day-requests'), '3', "the key's own numbers");
    assert.doesNotMatch((await page.textContent('#key-facts'))!, /Last used—/, 'Last used is filled right after the calls');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('keys: the list first, the form behind a button and emptied, long names, rules, bad IPs, past expiry, revoked keys', async () => {
    const page = await signedIn(member.email, member.password);
    await page.click('#nav-keys');
    await heading(page, 'API keys');
    await settled(page);
    const top = (await page.locator('#keys').boundingBox())!.y;
    console.log(`keys: the list starts ${Math.round(top)} px down at 1280x800`);
    assert.ok(top < 800, 'the list starts in the first screen at 1280x800');
    assert.ok(await page.isHidden('#new-key-panel'), 'the form waits behind its button');
    await page.click('#new-key-open');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'key-name');
    const name = 'n'.repeat(200);
    await page.fill('#key-name', name);
    await page.fill('#key-ips', '10.0.0.0/33\nnot-an-ip');
    await page.click('#create-key');
    assert.match((await page.textContent('#key-ips-error'))!, /Not an IP address or CIDR: 10\.0\.0\.0\/33, not-an-ip\./, 'every bad entry named');
    await page.fill('#key-ips', '127.0.0.1');
    await page.fill('#key-expires', '2020-01-01');
    await page.click('#create-key');
    assert.match((await page.textContent('#key-expires-error'))!, /This day has passed/, 'no key made already expired');
    await assert.rejects(g.gw.accounts.createKey(memberId, { name: 'past', expiresAt: '2020-01-01T23:59:59Z' }), /expiresAt: is in the past/, 'nor by the API');
    await page.fill('#key-expires', '');
    await page.click('#create-key');
    await page.waitForSelector('#new-key-url');
    assert.ok(await page.isHidden('#new-key-panel'), 'closed after the create');
    const id = (await g.gw.accounts.listKeys(memberId)).find((k) => k.name === name)!.id;
    await page.waitForSelector(`tr[data-key="${id}"]`);
    assert.equal(await page.textContent(`tr[data-key="${id}"] td.key-rules`), 'IPs 127.0.0.1', 'a key\'s rules in the list');
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    console.log(`keys: with a 200-character name the page is ${wide} px wide at 1280`);
    assert.ok(wide <= 1280, 'a 200-character name does not widen the page');
    await page.click('#new-key-open');
    assert.equal(await page.inputValue('#key-name'), '', 'the form was emptied');
    assert.equal(await page.inputValue('#key-ips'), '');
    await page.click('#new-key-cancel');

    await page.click(`button[data-revoke="${id}"]`);
    await page.click('#confirm-yes');
    await page.waitForSelector('#key-list-status:has-text("Revoked")');
    assert.equal(await page.locator(`tr[data-key="${id}"]`).count(), 0, 'a revoked key leaves the list');
    await page.check('#show-revoked');
    await page.waitForSelector(`tr[data-key="${id}"] .status-revoked`);
    await page.goto(`${g.url}/dashboard/#/keys/${id}`);
    await heading(page, `Key “${name}”`);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 1280, 'nor the key\'s page');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('the operator: own row, default plan, usage by account, plans deleted or refused in words, a suspended member told so', async () => {
    const page = await signedIn(operator().email, operator().password);
    await page.click('#nav-operator-accounts');
    await heading(page, 'Accounts');
    await page.waitForSelector(`tr[data-account="${member.email}"]`);
    assert.equal(await page.locator(`button[data-status-of="${operator().email}"]`).count(), 0, 'no Suspend on the operator\'s own row');
    await page.click('#new-account-open');
    assert.equal(await page.inputValue('#account-plan'), 'test', 'the plan new accounts get (accounts.defaultPlan) is preselected');
    await page.click('#new-account-cancel');

    await page.click(`a[aria-label="Usage of ${member.email}"]`);
    await heading(page, "Everyone's usage");
    await settled(page);
    assert.equal(await page.inputValue('#filter-account'), memberId, 'the account chosen');
    assert.match(await page.evaluate(() => location.hash), new RegExp(`accountId=${memberId}`), 'and kept in the address');
    await page.selectOption('#filter-account', '');
    await page.waitForSelector(`#by-account a[data-account-usage="${memberId}"]`);
    assert.match((await page.textContent('#by-account'))!, /Mira \(mira@example\.com\)/, 'usage by account, named');

    await g.gw.accounts.createPlan({ id: 'spare', name: 'Spare', cuPerSecond: 10, cuPerMonth: 1000 });
    await page.click('#nav-operator-plans');
    await heading(page, 'Plans');
    assert.ok(await page.isHidden('#plan-form'), 'the list first, the form behind New plan');
    await page.click('button[data-delete-plan="spare"]');
    await page.click('#confirm-yes');
    await page.waitForSelector('#plan-list-status:text("Plan spare deleted.")');
    assert.equal(await page.locator('tr[data-plan="spare"]').count(), 0);
    await page.click('button[data-delete-plan="developer"]');
    await page.click('#confirm-yes');
    await page.waitForSelector('[data-delete-error="developer"]:has-text("Not deleted")');
    assert.match((await page.textContent('[data-delete-error="developer"]'))!, /account/, "the server's 409 in words, in the plan's row");

    await page.click('#nav-operator-accounts');
    await page.click(`button[data-status-of="${member.email}"]`);
    await page.click('#confirm-yes');
    await page.waitForFunction((e) => document.querySelector(`button[data-status-of="${e}"]`)?.textContent === 'Reactivate', member.email);
    const suspended = await openPage(browser, g.url, 1280);
    await suspended.goto(`${g.url}/dashboard/#/login`);
    await suspended.fill('#email', member.email);
    await suspended.fill('#password', member.password);
    await suspended.click('#login');
    await suspended.waitForSelector('#login-form .form-error:not([hidden])');
    assert.match((await suspended.textContent('#login-form .form-error'))!, /^The account is suspended/, 'told after the right password');
    await suspended.fill('#password', 'wrong-password-123');
    await suspended.click('#login');
    await suspended.waitForSelector('#login-form .form-error:text-is("Wrong email or password.")');
    await suspended.context().close();
    await page.click(`button[data-status-of="${member.email}"]`);
    await page.waitForFunction((e) => document.querySelector(`button[data-status-of="${e}"]`)?.textContent === 'Suspend', member.email);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('login focus, pages opened by their path, mail not configured, loopback webhooks, options in words, an invitation', async () => {
    const anon = await openPage(browser, g.url, 1280);
    await anon.goto(`${g.url}/dashboard/`);
    await heading(anon, 'Log in');
    assert.equal(await anon.evaluate(() => document.activeElement?.id), 'email', 'the login starts on the email');
    const root = await fetch(`${g.url}/`);
    assert.equal(root.status, 200, '/ leads to the dashboard');
    assert.equal(new URL(root.url).pathname, '/dashboard/');
    await anon.click('#forgot-link');
    await heading(anon, 'Reset your password');
    await anon.fill('#forgot-email', member.email);
    await anon.click('#send-reset');
    await anon.waitForSelector('#forgot-form .form-error:not([hidden])');
    assert.match((await anon.textContent('#forgot-form .form-error'))!, /mail is not configured on this gateway/i, 'no link promised that cannot come');
    const { url: invitation } = await g.gw.team.invite(memberId, 'ivy@example.com', 'developer', memberId);
    await anon.goto(`${g.url}/dashboard/#/accept?token=${new URL(invitation.replace('#/', '')).searchParams.get('token')}`);
    await heading(anon, 'Accept the invitation');
    await anon.waitForSelector('#invitation');
    assert.match((await anon.textContent('#invitation'))!, /join Mira as developer \(ivy@example\.com\)/, 'the account and the role named');
    await anon.context().close();

    const page = await signedIn(member.email, member.password);
    await page.goto(`${g.url}/dashboard/settings`);
    await heading(page, 'Settings');
    assert.equal(await page.evaluate(() => location.hash), '#/settings', 'a path opens the same page as its hash');
    await page.click('#nav-alerts');
    await heading(page, 'Alerts');
    assert.match((await page.textContent('#alert-email-hint'))!, /Mail is not configured on this gateway/);

    await page.click('#nav-webhooks');
    await heading(page, 'Webhooks');
    await page.click('#new-webhook-open');
    await page.selectOption('#hook-kind', 'address.activity');
    await page.fill('#hook-url', 'http://127.0.0.1:9/hook');
    const address = '0x00000000000000000000000000000000000000aa';
    await page.fill('#hook-address-activity-addresses', address);
    await page.click('#create-webhook');
    await page.waitForSelector('#webhook-secret');
    assert.ok(await page.isHidden('#new-webhook-panel'), 'a loopback target is taken on the development default');
    await page.click('tr[data-webhook] a');
    await page.waitForSelector('#webhook-options');
    const options = (await page.textContent('#webhook-options'))!;
    assert.match(options, new RegExp(`: ${address}`));
    assert.doesNotMatch(options, /[{}"]/, 'options in words, not JSON');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  for (const width of [1280, 390]) {
    test(`the new parts at ${width} px: no serious or critical axe-core violation, nothing scrolls sideways`, async () => {
      const found: string[] = [];
      const check = async (page: Page, route: string, title: string) => {
        await page.goto(`${g.url}/dashboard/#${route}`);
        await heading(page, title);
        await settled(page);
        for (const v of await axeViolations(page)) found.push(`${route}: ${v}`);
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(wide <= width, `${route} at ${width} px is ${wide} px wide`);
      };
      const page = await signedIn(member.email, member.password, width);
      const key = (await g.gw.accounts.listKeys(memberId))[0];
      for (const [route, title] of [['/overview', 'Overview'], [`/keys/${key.id}`, `Key “${key.name}”`], ['/usage?range=24h', 'Usage'], ['/keys', 'API keys']]) {
        await check(page, route, title);
      }
      await page.click('#new-key-open');
      for (const v of await axeViolations(page)) found.push(`/keys (form open): ${v}`);
      await page.context().close();
      const op = await signedIn(operator().email, operator().password, width);
      await check(op, '/operator/usage', "Everyone's usage");
      await check(op, '/operator/plans', 'Plans');
      await op.click('#new-plan-open');
      for (const v of await axeViolations(op)) found.push(`/operator/plans (form open): ${v}`);
      await check(op, '/operator/accounts', 'Accounts');
      await op.context().close();
      assert.deepEqual(found, [], 'no serious or critical accessibility violation');
    });
  }
});
