/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core.
 * - A member makes a Restricted key with an IP allowlist (its name has HTML in it: shown as text), gets the complete
 *   endpoint URLs once with the focus on the first, copies the URL and calls it, filters the usage by that key, edits
 *   the allowlists (a bad address is named next to the field; Cancel; "Saved"), revokes the key and sees it refused.
 * - A member makes webhooks: a wrong address is refused in the page, next to its field; the secret is shown once;
 *   "Send test" says what it did, and the delivery appears with its payload.
 * - The operator makes an account, changes its plan after a confirmation, suspends and reactivates it, edits plans
 *   (every limit a labelled field), and sees networks with upstream health.
 * - axe-core on every page at 1280 px and 390 px: no serious or critical violation; at 390 px the menu is behind a
 *   button and nothing scrolls sideways. Screenshots of the main pages at both widths go to docs/screenshots/
 *   (shown in the README), taken there, after the flows above left data on every page.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { createPublicClient, http, webSocket } from 'viem';
import { PLAN_LIMITS } from '../../src/config/plan-limits.ts';
import { axeViolations as axe, browserSkip as skip, heading, launchChromium, logIn as logInOn, openPage, type Watched } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const SHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
if (skip) console.log(`dashboard: ${skip}`);

describe('the dashboard in Chromium', { timeout: 600_000, skip }, () => {
  let g: TestGateway;
  let browser: Browser;
  const member = { email: 'dana@example.com', password: 'dana-password-123' };
  const operator = () => ({ email: g.gw.secrets.operatorEmail!, password: g.gw.secrets.operatorPassword! });

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } }, webhooks: { allowPrivateTargets: true, pollMs: 50 } });
    await g.gw.accounts.createAccount({ name: 'Dana', email: member.email, password: member.password });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await g?.close();
  });

  /** A page of a new browser context (its own cookies), watched for script errors and CSP violations. */
  const open = (width = 1200, opts: { bypassCSP?: boolean } = {}) => openPage(browser, g.url, width, opts);

  async function logIn(email: string, password: string, width = 1200, opts: { bypassCSP?: boolean } = {}): Promise<Watched> {
    const page = await open(width, opts);
    await logInOn(page, g.url, email, password);
    return page;
  }

  test('a wrong password is said next to the form, with the button busy while it is checked', async () => {
    const page = await open();
    await page.goto(`${g.url}/dashboard/`);
    await page.click('#login');
    assert.equal(await page.textContent('#email-error'), 'This is required.', 'an empty field is named before anything is sent');
    assert.equal(await page.textContent('#password-error'), 'This is required.', 'every empty field at once');
    await page.fill('#email', member.email);
    await page.fill('#password', 'wrong-password-123');
    const busy = page.waitForSelector('#login[aria-busy=true][disabled]');
    await page.click('#login');
    await busy;
    await page.waitForSelector('#login-form .form-error:not([hidden])');
    assert.match((await page.textContent('#login-form .form-error'))!, /^Wrong email or password\.$/);
    assert.equal(await page.getAttribute('#login', 'aria-busy'), 'false');
    assert.ok(await page.isVisible('#forgot-link'), 'a way to reset a forgotten password');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('a member: Restricted key with an IP allowlist, its URL copied and called, usage by key, allowlists edited, revoked, refused', async () => {
    const page = await logIn(member.email, member.password);
    await page.click('#nav-keys');
    await heading(page, 'API keys');
    const name = '<img src=x id=injected>CI <b>bot</b>';
    await page.click('#new-key-open');
    await page.fill('#key-name', name);
    await page.selectOption('#key-type', 'Restricted');
    await page.click('#create-key');
    assert.equal(await page.textContent('#perm-error'), 'Choose at least one permission.', 'a Restricted key needs a permission: said next to them');
    await page.check('#perm-rpc');
    await page.fill('#key-ips', '127.0.0.1');
    await page.click('#create-key');
    await page.waitForSelector('#new-key-url');
    const url = await page.inputValue('#new-key-url');
    assert.match(url, new RegExp(`^${g.url}/v1/mainnet/ngk_`), 'the complete HTTPS URL with the key in it');
    assert.equal(await page.inputValue('#new-key-ws'), url.replace(/^http/, 'ws'), 'and the WebSocket URL');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'new-key-url', 'the focus is on the new URL');
    assert.ok(await page.isHidden('#new-key-panel'), 'the form closed after the create');
    assert.equal(await page.inputValue('#key-name'), '', 'and was emptied for the next key');
    await page.click('#copy-url');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url, 'the copy button put the URL on the clipboard');
    assert.equal(await page.getAttribute('#copy-url', 'aria-label'), 'Copy HTTP URL for mainnet', 'a copy button says what it copies');
    assert.equal(await page.textContent('td.key-name'), name, 'the name is shown as the text it is');
    assert.equal(await page.locator('#injected').count(), 0, 'and no element was made from it');

    // The copied URLs work with viem, over HTTP and over the WebSocket, from an address in the key's allowlist (loopback).
    assert.equal(typeof (await createPublicClient({ transport: http(url) }).getBlockNumber()), 'bigint');
    const ws = createPublicClient({ transport: webSocket(await page.inputValue('#new-key-ws')) });
    assert.equal(typeof (await ws.getBlockNumber()), 'bigint');
    await ws.transport.getRpcClient().then((c) => c.close());
    // A method that does not exist: an error, counted and explained on the usage page.
    const wrong = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_nothingHere', params: [] }) });
    assert.equal(((await wrong.json()) as { error: { code: number } }).error.code, -32601);
    const keyId = (await page.getAttribute('tr[data-key]', 'data-key'))!;

    // Usage, filtered by this key.
    await page.click('#nav-usage');
    await heading(page, 'Usage');
    await page.selectOption('#filter-key', keyId);
    await page.waitForFunction(() => document.querySelector('#total-requests')?.textContent === '3');
    assert.match((await page.textContent('#chart-methods + details'))!, /eth_blockNumber/, 'the chart has its values as a table');
    assert.match((await page.getAttribute('#chart-requests', 'aria-label'))!, /^Requests per hour: 3 requests in total/);
    assert.match((await page.textContent('#errors tr:has-text("-32601")'))!, /method not allowed/, 'an error code with its meaning from the catalogue');
    assert.match((await page.getAttribute('#csv', 'href'))!, new RegExp(`/api/v1/analytics\\.csv\\?.*keyId=${keyId}`));
    assert.match((await page.textContent('#quota-used'))!, /compute units used/);

    // The overview: the key just made, in every URL and snippet.
    await page.click('#nav-overview');
    await heading(page, 'Overview');
    assert.equal(await page.inputValue('#http-mainnet'), url);
    assert.match((await page.textContent('main'))!, new RegExp(`webSocket\\('${url.replace(/^http/, 'ws')}'\\)`));

    // The key's page: a bad address is named next to its field; Cancel restores; Save says Saved.
    await page.goto(`${g.url}/dashboard/#/keys/${keyId}`);
    await page.waitForSelector('#allowlists');
    assert.match((await page.textContent('#key-facts'))!, /Restricted/);
    await page.fill('#edit-ips', '127.0.0.1\nnot-an-ip');
    await page.click('#save-allowlists');
    assert.match((await page.textContent('#edit-ips-error'))!, /Not an IP address or CIDR: not-an-ip/);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'edit-ips', 'the focus is on the field to fix');
    await page.click('#allowlists button:has-text("Cancel")');
    assert.equal(await page.inputValue('#edit-ips'), '127.0.0.1', 'Cancel brings back what is saved');
    await page.fill('#edit-ips', '127.0.0.1\n10.0.0.0/8');
    await page.click('#save-allowlists');
    await page.waitForSelector('#allowlists .form-status:has-text("Saved")');
    assert.deepEqual((await g.gw.accounts.getKey(keyId)).ipAllowlist, ['127.0.0.1', '10.0.0.0/8']);

    await page.click('#revoke-key');
    await page.click('#confirm-yes');
    await page.waitForSelector('#key-status:text("revoked")');
    const refused = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }) });
    assert.equal(refused.status, 401);
    assert.equal(((await refused.json()) as { error: { data: { reason: string } } }).error.data.reason, 'key_revoked');
    assert.deepEqual(page.errors, [], 'no script error on the page (CSP included)');
    await page.context().close();
  });

  test('a member: webhooks with their options checked, a test event with feedback, its delivery and payload', async () => {
    const received: string[] = [];
    const receiver = createServer((req, res) => { let b = ''; req.on('data', (c) => { b += c; }).on('end', () => { received.push(b); res.end('thanks'); }); });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const page = await logIn(member.email, member.password);
      await page.click('#nav-webhooks');
      await heading(page, 'Webhooks');
      await page.click('#new-webhook-open');
      const kinds = await page.$$eval('#hook-kind option', (os) => os.map((o) => (o as HTMLOptionElement).value));
      assert.deepEqual(kinds.slice(0, 4), ['block.mined', 'logs', 'address.activity', 'transaction.mined'], 'every kind is offered');
      await page.selectOption('#hook-kind', 'address.activity');
      await page.fill('#hook-url', `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`);
      await page.fill('#hook-address-activity-addresses', '0x123');
      await page.click('#create-webhook');
      assert.match((await page.textContent('#hook-address-activity-addresses-error'))!, /0x123: must be an address/);
      await page.selectOption('#hook-kind', 'block.mined');
      await page.click('#create-webhook');
      await page.waitForSelector('#webhook-secret');
      assert.match(await page.inputValue('#webhook-secret'), /^whsec_/);
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'webhook-secret');
      await page.click('tr[data-webhook] button[data-test]');
      await page.waitForSelector('tr[data-webhook] .inline-status:has-text("Test event")');

      await page.click('tr[data-webhook] a');
      await page.waitForSelector('#deliveries');
      await page.waitForFunction(() => document.querySelector('#deliveries')?.textContent?.includes('webhook.test'));
      // Delivered within the poll interval: the page shows it when reloaded.
      await page.waitForFunction(async () => {
        (document.getElementById('reload-deliveries') as HTMLButtonElement).click();
        await new Promise((r) => setTimeout(r, 100));
        return document.querySelector('#deliveries')?.textContent?.includes('delivered');
      }, undefined, { polling: 200 });
      assert.equal(JSON.parse(received[0]).type, 'webhook.test');
      assert.deepEqual(page.errors, []);
      await page.context().close();
    } finally {
      receiver.close();
    }
  });

  test('the operator: makes an account, changes its plan after a confirmation, suspends it; plans and networks', async () => {
    const page = await logIn(operator().email, operator().password);
    await page.click('#nav-operator-accounts');
    await heading(page, 'Accounts');
    await page.click('#new-account-open');
    await page.fill('#account-name', 'Evan');
    await page.fill('#account-email', 'evan@example.com');
    await page.fill('#account-password', 'short');
    await page.click('#create-account');
    await page.waitForSelector('#account-password-error:not([hidden])');
    assert.equal(await page.textContent('#account-password-error'), 'Use at least 12 characters.', 'the validator’s wording, made human, next to the field');
    await page.fill('#account-password', 'evan-password-123');
    await page.selectOption('#account-plan', 'free');
    await page.click('#create-account');
    await page.waitForSelector('tr[data-account="evan@example.com"]');
    // A plan change asks first; cancelled, nothing changes.
    await page.selectOption('select[data-plan-of="evan@example.com"]', 'growth');
    await page.click('#confirm-no');
    assert.equal(await page.inputValue('select[data-plan-of="evan@example.com"]'), 'free');
    await page.selectOption('select[data-plan-of="evan@example.com"]', 'growth');
    await page.click('#confirm-yes');
    await page.waitForSelector('tr[data-account="evan@example.com"] .inline-status:text("Plan changed.")');
    const evan = (await g.gw.accounts.listAccounts()).find((a) => a.email === 'evan@example.com')!;
    assert.equal(evan.planId, 'growth');
    const login = () => fetch(`${g.url}/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'evan@example.com', password: 'evan-password-123' }) }).then((r) => r.status);
    assert.equal(await login(), 200);
    await page.click('button[data-status-of="evan@example.com"]');
    await page.click('#confirm-yes');
    await page.waitForFunction(() => document.querySelector('button[data-status-of="evan@example.com"]')?.textContent === 'Reactivate');
    assert.equal((await g.gw.accounts.getAccount(evan.id)).status, 'suspended');
    assert.equal(await login(), 403, 'a suspended account cannot log in (told so after the right password)');
    await page.click('button[data-status-of="evan@example.com"]');
    await page.waitForFunction(() => document.querySelector('button[data-status-of="evan@example.com"]')?.textContent === 'Suspend');
    assert.equal(await login(), 200, 'reactivated');

    await page.click('#nav-operator-networks');
    await heading(page, 'Networks');
    assert.match((await page.textContent('main table'))!, /up/);

    await page.click('#nav-operator-plans');
    await heading(page, 'Plans');
    const heads = await page.$$eval('#plans th', (ths) => ths.map((th) => th.textContent?.toLowerCase()));
    for (const l of PLAN_LIMITS) assert.ok(heads.includes(l.label), `a column labelled "${l.label}"`);
    await page.click('button[data-edit-plan="growth"]');
    await page.waitForSelector('#save-plan');
    assert.equal(await page.inputValue('#plan-id'), 'growth');
    await page.fill('#plan-cuPerSecond', '777');
    await page.click('#save-plan');
    await page.waitForSelector('#plan-list-status:text("Plan growth saved.")');
    assert.equal((await g.gw.accounts.getPlan('growth')).cuPerSecond, 777);
    assert.match((await page.textContent('tr[data-plan="growth"]'))!, /777/);
    // Every limit of the one definition (src/config/plan-limits.ts) is a labelled field, and is saved.
    await page.click('button[data-edit-plan="free"]');
    await page.waitForSelector('#save-plan');
    const wanted: Record<string, number | boolean> = {};
    for (const [i, l] of PLAN_LIMITS.entries()) {
      assert.match((await page.textContent(`label[for="plan-${l.name}"]`))!.toLowerCase(), new RegExp(l.label.replace(/[()]/g, '\\$&')), `the label of ${l.name}`);
      if (l.type === 'boolean') {
        wanted[l.name] = !(await page.isChecked(`#plan-${l.name}`));
        await page.setChecked(`#plan-${l.name}`, wanted[l.name] as boolean);
      } else {
        wanted[l.name] = Math.min(l.maximum ?? Infinity, (l.minimum ?? 0) + 40 + i);
        await page.fill(`#plan-${l.name}`, String(wanted[l.name]));
      }
    }
    await page.click('#save-plan');
    await page.waitForSelector('#plan-list-status:text("Plan free saved.")');
    const free = await g.gw.accounts.getPlan('free');
    for (const l of PLAN_LIMITS) assert.equal(free[l.name], wanted[l.name], `${l.name} saved from the form`);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  for (const width of [1280, 390]) {
    test(`every page at ${width} px: no serious or critical axe-core violation${width < 700 ? ', the menu behind a button, nothing scrolls sideways' : ''}`, async () => {
      await g.gw.accounts.createKey((await g.gw.accounts.listAccounts()).find((a) => a.email === member.email)!.id, { name: 'axe key', type: 'Standard' });
      const found: string[] = [];
      const check = async (page: Page, route: string, title: string, shot?: string) => {
        await page.goto(`${g.url}/dashboard/#${route}`);
        await heading(page, title);
        await page.waitForFunction(() => document.querySelector('main')?.getAttribute('aria-busy') === 'false');
        for (const v of await axe(page)) found.push(`${route}: ${v}`);
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(wide <= width, `${route} at ${width} px is ${wide} px wide`);
        if (shot) await page.screenshot({ path: `${SHOTS}${shot}-${width}.png`, fullPage: true, mask: [page.locator('.once input')] });
      };
      // The public pages (bypassCSP: only so that axe's script can be put in the page).
      const anon = await open(width, { bypassCSP: true });
      for (const [route, title, shot] of [['/login', 'Log in', 'login'], ['/signup', 'Sign up'], ['/forgot', 'Reset your password'], ['/reset?token=x', 'Choose a new password'], ['/accept?token=x', 'Accept the invitation']] as const) {
        await check(anon, route, title, shot);
      }
      await anon.context().close();

      const page = await logIn(member.email, member.password, width, { bypassCSP: true });
      if (width < 700) {
        assert.ok(!(await page.isVisible('#nav-keys')), 'the menu is folded');
        await page.click('#menu-button');
        assert.equal(await page.getAttribute('#menu-button', 'aria-expanded'), 'true');
        await page.click('#nav-keys');
        await heading(page, 'API keys');
        assert.ok(!(await page.isVisible('#nav-usage')), 'and folds again after a choice');
      }
      const keyId = (await g.gw.accounts.listKeys((await g.gw.accounts.listAccounts()).find((a) => a.email === member.email)!.id)).at(-1)!.id;
      const webhooks = (await (await page.request.get(`${g.url}/api/v1/webhooks`)).json()) as { webhooks: Array<{ id: string }> };
      for (const [route, title, shot] of [
        ['/overview', 'Overview', 'overview'], ['/keys', 'API keys', 'keys'], [`/keys/${keyId}`, 'Key “axe key”', 'key-detail'], ['/usage', 'Usage', 'usage'],
        ['/webhooks', 'Webhooks', 'webhooks'], ...(webhooks.webhooks[0] ? [[`/webhooks/${webhooks.webhooks[0].id}`, 'Webhook block.mined', 'webhook-detail']] : []),
        ['/alerts', 'Alerts', 'alerts'], ['/team', 'Team', 'team'], ['/settings', 'Settings'],
      ] as Array<[string, string, string?]>) {
        await check(page, route, title, shot);
      }
      await page.context().close();

      const op = await logIn(operator().email, operator().password, width, { bypassCSP: true });
      for (const [route, title, shot] of [['/operator/accounts', 'Accounts', 'accounts'], ['/operator/plans', 'Plans', 'plans'], ['/operator/networks', 'Networks', 'networks'], ['/operator/usage', "Everyone's usage"]] as Array<[string, string, string?]>) {
        await check(op, route, title, shot);
      }
      await op.context().close();
      assert.deepEqual(found, [], 'no serious or critical accessibility violation');
    });
  }
});
