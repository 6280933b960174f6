/**
 * A team's journey, in Chromium, as one story it lives through (nothing set up behind the page's back but the
 * operator's plan and the team's account):
 * - the account's owner invites a developer from the Team page; the invitation arrives by mail (a real SMTP server
 *   on loopback); the member opens its link, chooses a password and is logged in;
 * - the member makes a key, copies its full URL and calls it with viem over HTTP and over the WebSocket; a call the
 *   plan refuses (a debug method) is counted under that key on the usage page, filtered by the key, with its meaning;
 * - the member forgets the password, asks for a reset on the login page, reads the mail, sets a new password through
 *   its link (logged in again; the old password no longer works);
 * - the member sets quota alerts at 75 and 90 % and a `usage.threshold` webhook; usage crosses 75 %, then 90 %:
 *   each threshold arrives by mail and by webhook exactly once.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createPublicClient, http, webSocket } from 'viem';
import { browserSkip, heading, launchChromium, logIn, openPage, type Watched } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp.ts';

if (browserSkip) console.log(`team journey: ${browserSkip}`);

/** A link to the dashboard in a mail's text. */
const linkIn = (mail: ReceivedMail | undefined) => /https?:\/\/\S+\/dashboard\/#\/\S+/.exec(mail?.text ?? '')?.[0];

describe('a team on Nodegate: invited, keys, usage, a forgotten password, quota alerts (Chromium, SMTP, webhooks)', { timeout: 240_000, skip: browserSkip }, () => {
  let g: TestGateway;
  let smtp: TestSmtp;
  let browser: Browser;
  let receiver: Server;
  let hookUrl: string;
  /** What the webhook receiver got: each delivery's parsed body. */
  const hooks: Array<{ type: string; event: { kind: string; threshold: number } }> = [];
  const owner = { email: 'owner@acme.example', password: 'owner-password-123' };
  const member = { email: 'mira@acme.example', password: 'mira-password-1234', newPassword: 'mira-new-password-5678' };
  let page: Watched;
  let keyUrl: string;

  before(async () => {
    smtp = await startTestSmtp();
    receiver = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => {
        hooks.push(JSON.parse(body));
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts`;
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1 } },
      mail: { ...smtp.config, pollMs: 50 },
      alerts: { checkMs: 100 },
      limits: { usageFlushMs: 100 },
      webhooks: { allowPrivateTargets: true, pollMs: 50 },
    });
    // The operator's part: a small plan (1,000 compute units a month, no debug methods) and the team's account.
    await g.gw.accounts.createPlan({ id: 'team', name: 'Team', cuPerSecond: 10_000, cuPerMonth: 1_000, maxBatchSize: 100, debugMethods: false, maxFilters: 10 });
    await g.gw.accounts.createAccount({ name: 'Acme', email: owner.email, password: owner.password, planId: 'team' });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await g?.close();
    await smtp?.close();
    await new Promise((r) => receiver?.close(r));
  });

  test('invited by mail, the member sets a password from the link and is logged in', async () => {
    const ownerPage = await openPage(browser, g.url);
    await logIn(ownerPage, g.url, owner.email, owner.password);
    await ownerPage.goto(`${g.url}/dashboard/#/team`);
    await heading(ownerPage, 'Team');
    await ownerPage.fill('#invite-email', member.email);
    await ownerPage.selectOption('#invite-role', 'developer');
    await ownerPage.click('#invite');
    await ownerPage.waitForSelector('#invite-url');
    assert.deepEqual(ownerPage.errors, []);
    await ownerPage.context().close();

    await eventually(() => smtp.mails.some((m) => m.to.includes(member.email)), 10_000, 'the invitation mail');
    const invitation = smtp.mails.find((m) => m.to.includes(member.email))!;
    assert.match(invitation.subject, /invited to Acme/);
    const link = linkIn(invitation);
    assert.ok(link?.includes('#/accept?token='), `a link to accept in: ${invitation.text}`);

    page = await openPage(browser, g.url);
    await page.goto(link!);
    await heading(page, 'Accept the invitation');
    await page.fill('#accept-name', 'Mira');
    await page.fill('#accept-password', member.password);
    await page.click('#accept');
    await heading(page, 'Overview');
    // The link was single-use: opened again, it is refused.
    const again = await fetch(`${g.url}/api/v1/invitations/accept`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: new URL(link!.replace('#/accept', 'accept')).searchParams.get('token'), name: 'Eve', password: 'eve-password-123456' }),
    });
    assert.equal(again.status, 400);
  });

  test('a key: its full URL copied and called with viem over HTTP and WebSocket; a refused call counted under it', async () => {
    await page.click('#nav-keys');
    await heading(page, 'API keys');
    await page.click('#new-key-open');
    await page.fill('#key-name', 'journey');
    await page.click('#create-key');
    await page.waitForSelector('#new-key-url');
    await page.click('#copy-url');
    keyUrl = await page.evaluate(() => navigator.clipboard.readText());
    assert.match(keyUrl, new RegExp(`^${g.url}/v1/mainnet/ngk_[0-9A-Za-z]+$`), 'the copied text is the whole endpoint URL');
    const keyId = (await page.getAttribute('tr[data-key]', 'data-key'))!;

    assert.equal(typeof (await createPublicClient({ transport: http(keyUrl) }).getBlockNumber()), 'bigint');
    const ws = createPublicClient({ transport: webSocket(await page.inputValue('#new-key-ws')) });
    assert.equal(typeof (await ws.getBlockNumber()), 'bigint');
    await ws.transport.getRpcClient().then((c) => c.close());
    // The team's plan has no debug methods: refused, and counted under the key.
    const refused = await fetch(keyUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'debug_traceBlockByNumber', params: ['latest', {}] }) });
    assert.equal(refused.status, 403);
    const code = ((await refused.json()) as { error: { code: number } }).error.code;

    await page.click('#nav-usage');
    await heading(page, 'Usage');
    await page.selectOption('#filter-key', keyId);
    await page.waitForFunction(() => document.querySelector('#total-requests')?.textContent === '3');
    const errors = (await page.textContent('#errors'))!;
    assert.ok(errors.includes(String(code)), `the refusal's code ${code} is listed: ${errors}`);
    await page.selectOption('#filter-status', 'error');
    await page.waitForFunction(() => document.querySelector('#total-requests')?.textContent === '1');
    assert.deepEqual(page.errors, []);
  });

  test('a forgotten password: reset by mail, logged in with the new one, the old one refused', async () => {
    const anon = await openPage(browser, g.url);
    await anon.goto(`${g.url}/dashboard/#/login`);
    await anon.click('#forgot-link');
    await heading(anon, 'Reset your password');
    await anon.fill('#forgot-email', member.email);
    const before = smtp.mails.length;
    await anon.click('#send-reset');
    await eventually(() => smtp.mails.slice(before).some((m) => m.to.includes(member.email)), 10_000, 'the reset mail');
    const mail = smtp.mails.slice(before).find((m) => m.to.includes(member.email))!;
    assert.match(mail.subject, /Reset your Nodegate password/);
    const link = linkIn(mail);
    assert.ok(link?.includes('#/reset?token='), `a reset link in: ${mail.text}`);
    await anon.goto(link!);
    await heading(anon, 'Choose a new password');
    await anon.fill('#reset-password', member.newPassword);
    await anon.click('#set-password');
    await heading(anon, 'Overview');
    await anon.context().close();

    const login = (password: string) => fetch(`${g.url}/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: member.email, password }) });
    assert.equal((await login(member.password)).status, 401, 'the old password no longer works');
    assert.equal((await login(member.newPassword)).status, 200);
    await page.context().close();
    page = await openPage(browser, g.url);
    await logIn(page, g.url, member.email, member.newPassword);
  });

  test('quota alerts at 75 and 90 %: each arrives by mail and by webhook exactly once', async () => {
    await page.goto(`${g.url}/dashboard/#/alerts`);
    await heading(page, 'Alerts');
    await page.check('#quota input[value="75"]');
    await page.check('#quota input[value="90"]');
    await page.click('#save-alerts');
    await page.waitForSelector('#save-alerts[aria-busy=false]');

    await page.goto(`${g.url}/dashboard/#/webhooks`);
    await heading(page, 'Webhooks');
    await page.click('#new-webhook-open');
    await page.selectOption('#hook-kind', 'usage.threshold');
    await page.fill('#hook-url', hookUrl);
    await page.click('#create-webhook');
    await page.waitForSelector('#webhook-secret');

    const batch = (n: number) => fetch(keyUrl, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_blockNumber', params: [] }))),
    });
    // One mail per recipient: the account's owner and the developer (a viewer would not be mailed).
    const alertMails = (threshold: number, to = member.email) => smtp.mails.filter((m) => m.to.includes(to) && m.subject.startsWith(`Nodegate: ${threshold}% of the monthly quota used`));
    const alertHooks = (threshold: number) => hooks.filter((h) => h.type === 'usage.threshold' && h.event.threshold === threshold);

    // 20 compute units were used above (two calls of 10; the refused one is free): 58 more calls take the month to
    // 600 of 1,000 (60 %), then 16 more to 76 %.
    assert.equal((await batch(58)).status, 200);
    assert.equal((await batch(16)).status, 200);
    await eventually(() => alertMails(75).length >= 1 && alertHooks(75).length >= 1, 15_000, 'the 75 % alert by mail and by webhook');
    assert.equal(alertMails(90).length + alertHooks(90).length, 0, 'not yet 90 %');
    // More usage past 75 %, then past 90 %: the 90 % alert comes; the 75 % one never again.
    assert.equal((await batch(5)).status, 200);
    assert.equal((await batch(10)).status, 200);
    await eventually(() => alertMails(90).length >= 1 && alertHooks(90).length >= 1, 15_000, 'the 90 % alert by mail and by webhook');
    // The 90 % alert was sent after later checks of the same account: had 75 % been sent again, it would be here.
    assert.deepEqual([alertMails(75).length, alertHooks(75).length, alertMails(90).length, alertHooks(90).length], [1, 1, 1, 1]);
    assert.deepEqual([alertMails(75, owner.email).length, alertMails(90, owner.email).length], [1, 1], 'the owner is mailed each once too');

    await page.goto(`${g.url}/dashboard/#/alerts`);
    await heading(page, 'Alerts');
    await page.waitForFunction(() => /Quota 90 %/.test(document.querySelector('#recent-alerts')?.textContent ?? ''));
    assert.deepEqual(page.errors, []);
  });
});
