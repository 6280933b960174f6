/**
 * The dashboard's team pages in Chromium, against the accounts routes: an owner invites a developer and a
 * viewer (the link shown with a copy button, the focus on it), each accepts in their own browser and is logged in
 * with their role; the viewer sees keys read-only; the owner changes a role and withdraws an invitation; "forgot
 * password" answers the same for any email; the operator issues a reset link and the account's owner sets a new
 * password through it; the operator sets an account's password and invites a member to it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip as skip, heading, launchChromium, logIn as logInOn, openPage, type Watched } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

describe('the dashboard: team, invitations and password reset in Chromium', { timeout: 600_000, skip }, () => {
  let g: TestGateway;
  let browser: Browser;
  const owner = { email: 'olga@example.com', password: 'olga-password-123' };

  before(async () => {
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } } });
    await g.gw.accounts.createAccount({ name: 'Olga', email: owner.email, password: owner.password });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await g?.close();
  });

  const open = () => openPage(browser, g.url);
  async function logIn(email: string, password: string): Promise<Watched> {
    const page = await open();
    await logInOn(page, g.url, email, password);
    return page;
  }

  /** The owner invites `email` as `role`; the link the page shows (focused, copyable). */
  async function invite(page: Page, email: string, role: string): Promise<string> {
    await page.fill('#invite-email', email);
    await page.selectOption('#invite-role', role);
    await page.click('#invite');
    await page.waitForSelector(`#invite-url`);
    await page.waitForFunction((e) => document.querySelector('#invite-url')?.closest('section')?.textContent?.includes(e), email);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'invite-url', 'the focus is on the link');
    await page.click('#invite-url ~ .copy-wrap button');
    const url = await page.inputValue('#invite-url');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url);
    assert.match(url, /\/dashboard\/#\/accept\?token=/);
    return url;
  }

  /** Someone opens an invitation link in their own browser and joins; their page, logged in. */
  async function accept(url: string, name: string, password: string): Promise<Watched> {
    const page = await open();
    await page.goto(url);
    await heading(page, 'Accept the invitation');
    assert.ok(!(await page.isVisible('#accept-token')), 'the code from the link is not asked again');
    await page.fill('#accept-name', name);
    await page.fill('#accept-password', password);
    await page.click('#accept');
    await heading(page, 'Overview');
    return page;
  }

  test('an owner invites a developer and a viewer; each joins with their role; the viewer reads only', async () => {
    const page = await logIn(owner.email, owner.password);
    await page.click('#nav-team');
    await heading(page, 'Team');
    assert.match((await page.textContent('#invite-role + .explained'))!, /Keys, webhooks/, 'what the role may do, under the choice');
    const devLink = await invite(page, 'dev@example.com', 'developer');
    const viewLink = await invite(page, 'vic@example.com', 'viewer');
    await page.waitForSelector('tr[data-invitation="vic@example.com"]');

    const dev = await accept(devLink, 'Devi', 'devi-password-123');
    assert.match((await dev.textContent('#who'))!, /dev@example\.com · developer/);
    await dev.click('#nav-keys');
    await heading(dev, 'API keys');
    await dev.click('#new-key-open');
    await dev.fill('#key-name', 'devi key');
    await dev.click('#create-key');
    await dev.waitForSelector('#new-key-url');

    const viewer = await accept(viewLink, 'Vic', 'vic-password-1234');
    await viewer.click('#nav-keys');
    await heading(viewer, 'API keys');
    await viewer.waitForSelector('tr[data-key]');
    assert.equal(await viewer.locator('#new-key-open').count(), 0, 'no button to make a key');
    assert.equal(await viewer.locator('button[data-revoke]').count(), 0, 'no revoke button');
    assert.match((await viewer.textContent('main'))!, /You are a viewer of this account/);
    await viewer.click('#nav-team');
    await heading(viewer, 'Team');
    assert.equal(await viewer.locator('#invite-form').count(), 0, 'only an owner invites');
    assert.match((await viewer.textContent('#members'))!, /dev@example\.com/);

    // The owner: the two members are listed; one role changed; an invitation withdrawn.
    await page.reload();
    await heading(page, 'Team');
    await page.waitForSelector('tr[data-member="vic@example.com"]');
    await page.selectOption('select[data-role-of="vic@example.com"]', 'developer');
    await page.waitForSelector('tr[data-member="vic@example.com"] .inline-status:text("Saved.")');
    await invite(page, 'later@example.com', 'viewer');
    await page.click('tr[data-invitation="later@example.com"] button');
    await page.waitForFunction(() => !document.querySelector('tr[data-invitation="later@example.com"]'));
    for (const p of [page, dev, viewer]) assert.deepEqual(p.errors, []);
    for (const p of [page, dev, viewer]) await p.context().close();
  });

  test('forgot password answers alike for any email; the operator issues a reset link and the owner sets a new password with it', async () => {
    const anon = await open();
    await anon.goto(`${g.url}/dashboard/#/login`);
    await anon.click('#forgot-link');
    await heading(anon, 'Reset your password');
    const said: string[] = [];
    // This gateway has no mail: it says so (no link is promised), the same for any email.
    for (const email of [owner.email, 'nobody@example.com']) {
      await anon.fill('#forgot-email', email);
      await anon.click('#send-reset');
      await anon.waitForSelector('#forgot-form .form-error:not([hidden])');
      said.push((await anon.textContent('#forgot-form .form-error'))!);
      await anon.evaluate(() => { (document.querySelector('#forgot-form .form-error') as HTMLElement).hidden = true; });
    }
    assert.equal(said[0], said[1], 'the same answer whether or not the email has an account');
    assert.match(said[0], /mail is not configured on this gateway/i);
    await anon.context().close();

    const op = await logIn(g.gw.secrets.operatorEmail!, g.gw.secrets.operatorPassword!);
    await op.click('#nav-operator-accounts');
    await heading(op, 'Accounts');
    await op.click(`button[data-manage="${owner.email}"]`);
    await op.click('#reset-link');
    await op.waitForSelector('#reset-url');
    assert.equal(await op.evaluate(() => document.activeElement?.id), 'reset-url');
    const link = await op.inputValue('#reset-url');
    assert.match(link, /\/dashboard\/#\/reset\?token=/);
    await op.context().close();

    const page = await open();
    await page.goto(link);
    await heading(page, 'Choose a new password');
    await page.fill('#reset-password', 'olga-new-password-456');
    await page.click('#set-password');
    await heading(page, 'Overview');
    // The link was single-use: a second time it says so, next to the form.
    const again = await open();
    await again.goto(link);
    await heading(again, 'Choose a new password');
    await again.fill('#reset-password', 'olga-third-password-789');
    await again.click('#set-password');
    await again.waitForSelector('#reset-form .form-error:not([hidden])');
    assert.match((await again.textContent('#reset-form .form-error'))!, /invalid or has expired/);
    const login = (password: string) => fetch(`${g.url}/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: owner.email, password }) }).then((r) => r.status);
    assert.equal(await login('olga-new-password-456'), 200);
    assert.equal(await login(owner.password), 401);
    for (const p of [page, again]) assert.deepEqual(p.errors, []);
    for (const p of [page, again]) await p.context().close();
  });

  test("the operator sets an account's password and invites a member to it from the accounts page", async () => {
    await g.gw.accounts.createAccount({ name: 'Pia', email: 'pia@example.com' });
    const op = await logIn(g.gw.secrets.operatorEmail!, g.gw.secrets.operatorPassword!);
    await op.click('#nav-operator-accounts');
    await heading(op, 'Accounts');
    await op.click('button[data-manage="pia@example.com"]');
    assert.equal(await op.evaluate(() => document.activeElement?.id), 'panel-heading', 'the focus goes to the panel');
    await op.fill('#op-password', 'short');
    await op.click('#set-password');
    await op.waitForSelector('#op-password-error:not([hidden])');
    assert.equal(await op.textContent('#op-password-error'), 'Use at least 12 characters.');
    await op.fill('#op-password', 'pia-password-1234');
    await op.click('#set-password');
    await op.waitForSelector('#set-password-form .form-status:has-text("Password set")');
    await op.fill('#op-invite-email', 'pia-dev@example.com');
    await op.click('#op-invite');
    await op.waitForSelector('#op-invite-url');
    const link = await op.inputValue('#op-invite-url');
    assert.deepEqual(op.errors, []);
    await op.context().close();

    const pia = await logIn('pia@example.com', 'pia-password-1234');
    await pia.context().close();
    const dev = await accept(link, 'Pia Dev', 'pia-dev-password-1');
    assert.match((await dev.textContent('#who'))!, /pia-dev@example\.com · developer/);
    await dev.context().close();
  });
});
