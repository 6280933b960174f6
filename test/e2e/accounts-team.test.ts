/**
 * Through the wire: team members with roles, invitations, password reset by mail (read from a real SMTP
 * server the test runs), and the operator's links. Tokens are single-use and expire; a reset never tells whether an
 * email exists; a viewer cannot make keys; a member sees only its own account.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/eventually.ts';

interface Mail { to: string; subject: string; text: string }
interface Res { status: number; body: any; cookie?: string }
interface Session { cookie: string; csrf: string }

describe('accounts for teams: members, invitations, password reset', { timeout: 180_000 }, () => {
  let g: TestGateway;
  let smtp: SMTPServer;
  const inbox: Mail[] = [];
  const operator = () => `Basic ${Buffer.from(`${g.gw.secrets.operatorEmail}:${g.gw.secrets.operatorPassword}`).toString('base64')}`;

  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
    const res = await fetch(g.url + path, {
      method, headers: { ...(method !== 'GET' ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const cookie = res.headers.getSetCookie()[0]?.split(';')[0];
    return { status: res.status, body: text ? JSON.parse(text) : undefined, cookie };
  }
  const as = (s: Session, method: string, path: string, body?: unknown) =>
    call(method, path, body, { cookie: s.cookie, ...(method !== 'GET' ? { 'x-csrf-token': s.csrf } : {}) });
  const session = (r: Res): Session => {
    assert.equal(r.status, r.status < 300 ? r.status : 200, JSON.stringify(r.body));
    assert.ok(r.cookie, 'the session cookie is set');
    return { cookie: r.cookie!, csrf: r.body.csrfToken };
  };
  async function login(email: string, password: string): Promise<Session> {
    const r = await call('POST', '/api/v1/session', { email, password });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return session(r);
  }
  const tokenOf = (url: string) => new URL(url.replace('#/', '')).searchParams.get('token')!;
  const mailTo = (to: string) => inbox.filter((m) => m.to.toLowerCase() === to.toLowerCase());
  let owner: Session;

  /** Invites `email` to the demo account as `role`, accepts, and answers the member's session. */
  async function member(email: string, role: 'owner' | 'developer' | 'viewer'): Promise<Session & { id: string; password: string }> {
    const invited = await as(owner, 'POST', '/api/v1/account/invitations', { email, role });
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    const password = `password of ${email}`;
    const accepted = await call('POST', '/api/v1/invitations/accept', { token: tokenOf(invited.body.url), name: email.split('@')[0], password });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    return { ...session(accepted), id: accepted.body.member.id, password };
  }

  before(async () => {
    smtp = new SMTPServer({
      authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
      onData(stream, _session, done) {
        simpleParser(stream).then((m) => {
          inbox.push({ to: (Array.isArray(m.to) ? m.to[0] : m.to)!.value[0].address!, subject: m.subject ?? '', text: m.text ?? '' });
          done();
        }, done);
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as { port: number }).port;
    g = await startTestGateway({
      networks: { mainnet: { chainId: 1 } },
      mail: { smtp: { host: '127.0.0.1', port, timeoutMs: 5000 }, pollMs: 50 },
      accounts: { publicUrl: 'https://nodes.example.test' },
    });
    owner = await login('demo@localhost', g.gw.secrets.demoPassword!);
  });
  after(async () => {
    await g?.close();
    await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  });

  test("the quick start's demo login works: the account's owner", async () => {
    const r = await as(owner, 'GET', '/api/v1/session');
    assert.equal(r.status, 200);
    assert.equal(r.body.account.email, 'demo@localhost');
    assert.equal(r.body.member, null);
    assert.equal(r.body.role, 'owner');
  });

  test('an invitation is mailed with a link on the public URL; accepted once it logs in, a second use fails', async () => {
    const invited = await as(owner, 'POST', '/api/v1/account/invitations', { email: 'Dev@Example.com', role: 'developer' });
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    assert.equal(invited.body.emailed, true);
    assert.equal(invited.body.invitation.role, 'developer');
    assert.match(invited.body.url, /^https:\/\/nodes\.example\.test\/dashboard\/#\/accept\?token=[\w-]{43}$/);
    await eventually(() => mailTo('Dev@Example.com').length === 1, 10_000, 'the invitation mail arrives');
    assert.ok(mailTo('Dev@Example.com')[0].text.includes(invited.body.url), 'the mail carries the link');
    const listed = await as(owner, 'GET', '/api/v1/account/members');
    assert.deepEqual(listed.body.invitations.map((i: any) => i.id), [invited.body.invitation.id]);

    const token = tokenOf(invited.body.url);
    const accepted = await call('POST', '/api/v1/invitations/accept', { token, name: 'Dev', password: 'a good long password' });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    assert.equal(accepted.body.role, 'developer');
    assert.equal(accepted.body.member.email, 'Dev@Example.com');
    assert.equal(accepted.body.account.email, 'demo@localhost');
    const dev = session(accepted);
    assert.equal((await as(dev, 'GET', '/api/v1/session')).body.member.name, 'Dev');

    const again = await call('POST', '/api/v1/invitations/accept', { token, name: 'Mallory', password: 'another long password' });
    assert.equal(again.status, 400);
    assert.deepEqual(again.body.error, { code: 'validation_failed', field: 'token', message: 'the link is invalid or has expired' });
    // The member logs in with the password chosen; the team lists them, the invitation is gone.
    await login('dev@example.com', 'a good long password');
    const team = (await as(owner, 'GET', '/api/v1/account/members')).body;
    assert.deepEqual(team.owner, { email: 'demo@localhost', name: 'Demo' });
    assert.ok(team.members.some((m: any) => m.email === 'Dev@Example.com' && m.role === 'developer'));
    assert.ok(!team.invitations.some((i: any) => i.id === invited.body.invitation.id));
  });

  test('inviting an email that has a login answers exactly as for an unknown one; its mail and its link say it cannot join with it', async () => {
    const shape = (r: Res) => ({ status: r.status, keys: Object.keys(r.body).sort(), invitation: Object.keys(r.body.invitation).sort(), emailed: r.body.emailed });
    const unknown = await as(owner, 'POST', '/api/v1/account/invitations', { email: 'nobody-yet@example.com', role: 'viewer' });
    const member = await as(owner, 'POST', '/api/v1/account/invitations', { email: 'dev@example.com', role: 'viewer' });
    const account = await as(owner, 'POST', '/api/v1/account/invitations', { email: g.gw.secrets.operatorEmail, role: 'viewer' });
    assert.equal(unknown.status, 201, JSON.stringify(unknown.body));
    assert.deepEqual(shape(member), shape(unknown), 'an existing member login is not told apart');
    assert.deepEqual(shape(account), shape(unknown), "an existing account's login is not told apart");
    await eventually(() => mailTo(g.gw.secrets.operatorEmail!).length === 1, 10_000, 'the invitation mail arrives');
    assert.match(mailTo(g.gw.secrets.operatorEmail!)[0].text, /already has a Nodegate login/);
    assert.ok(!mailTo(g.gw.secrets.operatorEmail!)[0].text.includes(account.body.url), 'no link that cannot work');
    const accepted = await call('POST', '/api/v1/invitations/accept', { token: tokenOf(member.body.url), name: 'Dev again', password: 'a good long password' });
    assert.equal(accepted.status, 409, JSON.stringify(accepted.body));
    assert.equal((await login('dev@example.com', 'a good long password')).cookie.length > 0, true, 'the login is as it was');
  });

  test('invitation mail is bounded: 3 a day to one address whoever sends them, 20 invitations an hour from one account', async () => {
    const target = 'stranger@example.org';
    const other = await call('POST', '/api/v1/operator/accounts', { name: 'Other inviter', email: 'other-inviter@example.com', password: 'the other inviter password' }, { authorization: operator() });
    assert.equal(other.status, 201, JSON.stringify(other.body));
    const otherOwner = await login('other-inviter@example.com', 'the other inviter password');
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await as(otherOwner, 'POST', '/api/v1/account/invitations', { email: target, role: 'viewer' })).status);
    const made = statuses.filter((s) => s === 201).length;
    const refused = statuses.filter((s) => s === 429).length;
    // Another account inviting the same address: made and answered the same, not mailed (the address's budget is spent).
    const fromDemo = await as(owner, 'POST', '/api/v1/account/invitations', { email: target, role: 'viewer' });
    assert.equal(fromDemo.status, 201);
    await eventually(() => mailTo(target).length >= 3, 10_000, 'the first mails arrive');
    await new Promise((r) => setTimeout(r, 1000)); // and no more after them
    console.log(`40 invitations to one address: ${made} made (201), ${refused} refused (429); mails to it ${mailTo(target).length} (was 40)`);
    assert.equal(made, 20);
    assert.equal(refused, 20);
    assert.equal(mailTo(target).length, 3);
  });

  test('the same invitation used twice at the same moment makes one member', async () => {
    const invited = await as(owner, 'POST', '/api/v1/account/invitations', { email: 'twice@example.com', role: 'viewer' });
    const token = tokenOf(invited.body.url);
    const both = await Promise.all([1, 2].map((i) => call('POST', '/api/v1/invitations/accept', { token, name: `Twice ${i}`, password: 'a good long password' })));
    assert.deepEqual(both.map((r) => r.status).sort(), [200, 400]);
    assert.equal((await as(owner, 'GET', '/api/v1/account/members')).body.members.filter((m: any) => m.email === 'twice@example.com').length, 1);
  });

  test('an expired invitation fails with the same answer as a bad one', async () => {
    const invited = await as(owner, 'POST', '/api/v1/account/invitations', { email: 'late@example.com', role: 'viewer' });
    assert.equal(invited.status, 201);
    // Time moved on: the invitation's expiry is put in the past, in the store itself.
    const db = new Database(join(g.dataDir, 'nodegate.db'));
    try {
      // The token is in the link (and its mail) only: the tokens table keeps its SHA-256.
      const token = tokenOf(invited.body.url);
      const row = db.prepare('SELECT * FROM account_tokens WHERE id = ?').get(invited.body.invitation.id) as Record<string, unknown>;
      assert.equal(row.id_hash, createHash('sha256').update(token).digest('hex'));
      assert.ok(!JSON.stringify(row).includes(token));
      const changed = db.prepare('UPDATE account_tokens SET expires_at = ? WHERE id = ?').run(new Date(Date.now() - 1000).toISOString(), invited.body.invitation.id);
      assert.equal(changed.changes, 1);
    } finally {
      db.close();
    }
    const r = await call('POST', '/api/v1/invitations/accept', { token: tokenOf(invited.body.url), name: 'Late', password: 'a good long password' });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.error, { code: 'validation_failed', field: 'token', message: 'the link is invalid or has expired' });
    const unknown = await call('POST', '/api/v1/invitations/accept', { token: 'x'.repeat(43), name: 'Late', password: 'a good long password' });
    assert.deepEqual(unknown.body, r.body);
    assert.ok(!(await as(owner, 'GET', '/api/v1/account/members')).body.invitations.some((i: any) => i.email === 'late@example.com'), 'not pending');
  });

  test('password reset: the same answer for a known and an unknown email, mail only to the known; the link resets once and ends old sessions', async () => {
    const m = await member('forgetful@example.com', 'developer');
    const other = await login('forgetful@example.com', m.password);
    const unknown = await call('POST', '/api/v1/password-reset', { email: 'nobody-here@example.com' });
    const known = await call('POST', '/api/v1/password-reset', { email: 'forgetful@example.com' });
    assert.deepEqual([unknown.status, unknown.body], [known.status, known.body]);
    assert.deepEqual(known.body, { message: 'if an account uses this email, a reset link is on its way' });
    assert.equal(known.status, 202);
    await eventually(() => mailTo('forgetful@example.com').some((x) => /reset/i.test(x.subject)), 10_000, 'the reset mail arrives');
    // Requests are handled in order after their answers: the unknown one's turn came first, and wrote nothing.
    const outbox = await g.gw.store.mail.listMail(100);
    assert.ok(outbox.some((x) => x.to === 'forgetful@example.com'));
    assert.ok(!outbox.some((x) => x.to === 'nobody-here@example.com'), 'no mail written for an unknown email');
    assert.ok(!inbox.some((x) => x.to === 'nobody-here@example.com'));
    const sent = outbox.find((x) => x.to === 'forgetful@example.com')!;

    const mail = mailTo('forgetful@example.com').find((x) => /reset/i.test(x.subject))!;
    const url = /https:\/\/nodes\.example\.test\/dashboard\/#\/reset\?token=[\w-]+/.exec(mail.text)![0];
    const done = await call('POST', '/api/v1/password-reset/complete', { token: tokenOf(url), password: 'a brand new password' });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.member.email, 'forgetful@example.com');
    assert.equal((await as(m, 'GET', '/api/v1/session')).status, 401, 'the old sessions ended');
    assert.equal((await as(other, 'GET', '/api/v1/keys')).status, 401);
    assert.equal((await as(session(done), 'GET', '/api/v1/session')).status, 200, 'the new one works');
    assert.equal((await as(owner, 'GET', '/api/v1/session')).status, 200, "the rest of the team's sessions stay");
    assert.equal((await call('POST', '/api/v1/session', { email: 'forgetful@example.com', password: m.password })).status, 401);
    await login('forgetful@example.com', 'a brand new password');
    const twice = await call('POST', '/api/v1/password-reset/complete', { token: tokenOf(url), password: 'yet another password' });
    assert.deepEqual([twice.status, twice.body.error.field], [400, 'token'], 'a reset link works once');
    // Once sent, the outbox no longer holds the link (recorded just after the server took it).
    let kept = (await g.gw.store.mail.listMail(100)).find((x) => x.id === sent.id)!;
    for (let i = 0; i < 500 && !kept.sentAt; i++) {
      await new Promise((r) => setTimeout(r, 10));
      kept = (await g.gw.store.mail.listMail(100)).find((x) => x.id === sent.id)!;
    }
    assert.ok(kept.sentAt, 'recorded as sent');
    assert.equal(kept.body, '', 'the body (with its token) is gone once sent');
  });

  test('roles: a viewer reads but gets 403 creating, changing or revoking a key; a developer may; only an owner manages the team', async () => {
    const viewer = await member('viewer@example.com', 'viewer');
    const dev = await member('builder@example.com', 'developer');
    assert.equal((await as(viewer, 'GET', '/api/v1/keys')).status, 200);
    assert.equal((await as(viewer, 'GET', '/api/v1/account')).status, 200);
    const refused = await as(viewer, 'POST', '/api/v1/keys', { name: 'mine' });
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body.error, { code: 'forbidden', message: 'a viewer cannot create, change or revoke keys' });
    const made = await as(dev, 'POST', '/api/v1/keys', { name: 'built' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal((await as(viewer, 'PATCH', `/api/v1/keys/${made.body.id}`, { name: 'renamed' })).status, 403);
    assert.equal((await as(viewer, 'POST', `/api/v1/keys/${made.body.id}/revoke`)).status, 403);
    assert.equal((await as(dev, 'POST', '/api/v1/account/invitations', { email: 'friend@example.com', role: 'owner' })).status, 403, 'a developer cannot invite');
    assert.equal((await as(dev, 'PATCH', `/api/v1/account/members/${viewer.id}`, { role: 'owner' })).status, 403);
    assert.equal((await as(viewer, 'GET', '/api/v1/account/members')).status, 200, 'anyone reads the team');
    // The owner changes a role: from the next request the viewer may make keys.
    const promoted = await as(owner, 'PATCH', `/api/v1/account/members/${viewer.id}`, { role: 'developer' });
    assert.equal(promoted.body.role, 'developer');
    assert.equal((await as(viewer, 'POST', '/api/v1/keys', { name: 'now mine' })).status, 201);
    // Removed: its sessions end.
    assert.equal((await as(owner, 'DELETE', `/api/v1/account/members/${dev.id}`)).status, 204);
    assert.equal((await as(dev, 'GET', '/api/v1/keys')).status, 401);
    // A member is no operator, even of an operator's account, unless made its owner.
    assert.equal((await as(viewer, 'GET', '/api/v1/operator/accounts')).status, 403);
    // A member changes its own password: its other sessions end, the owner's stay.
    const elsewhere = await login('viewer@example.com', viewer.password);
    const changed = await as(viewer, 'POST', '/api/v1/session/password', { currentPassword: viewer.password, newPassword: 'the viewer new password' });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal(changed.body.member.email, 'viewer@example.com');
    assert.equal((await as(elsewhere, 'GET', '/api/v1/session')).status, 401);
    assert.equal((await as(session(changed), 'GET', '/api/v1/session')).status, 200);
    assert.equal((await as(owner, 'GET', '/api/v1/session')).status, 200);
    await login('viewer@example.com', 'the viewer new password');
  });

  test("a member never sees another account's keys, members or usage", async () => {
    const other = await call('POST', '/api/v1/operator/accounts', { name: 'Other', email: 'other-owner@example.com', password: 'the other owner password' }, { authorization: operator() });
    assert.equal(other.status, 201);
    const key = await call('POST', `/api/v1/operator/accounts/${other.body.id}/keys`, { name: 'theirs' }, { authorization: operator() });
    const otherOwner = await login('other-owner@example.com', 'the other owner password');
    const invited = await as(otherOwner, 'POST', '/api/v1/account/invitations', { email: 'their-dev@example.com', role: 'developer' });
    const theirs = await call('POST', '/api/v1/invitations/accept', { token: tokenOf(invited.body.url), name: 'Theirs', password: 'their dev password' });
    const theirMember = theirs.body.member.id;
    const mine = await member('curious@example.com', 'owner');

    assert.equal((await as(mine, 'GET', `/api/v1/keys/${key.body.id}`)).status, 404);
    assert.equal((await as(mine, 'PATCH', `/api/v1/keys/${key.body.id}`, { name: 'x' })).status, 404);
    assert.equal((await as(mine, 'POST', `/api/v1/keys/${key.body.id}/revoke`)).status, 404);
    assert.ok(!(await as(mine, 'GET', '/api/v1/keys')).body.keys.some((k: any) => k.id === key.body.id));
    const team = (await as(mine, 'GET', '/api/v1/account/members')).body;
    assert.ok(!team.members.some((m: any) => m.id === theirMember));
    assert.ok(!team.invitations.some((i: any) => i.id === invited.body.invitation.id));
    assert.equal((await as(mine, 'PATCH', `/api/v1/account/members/${theirMember}`, { role: 'viewer' })).status, 404);
    assert.equal((await as(mine, 'DELETE', `/api/v1/account/members/${theirMember}`)).status, 404);
    assert.equal((await as(mine, 'DELETE', `/api/v1/account/invitations/${invited.body.invitation.id}`)).status, 404);
    await fetch(`${g.url}/v1/mainnet/${key.body.value}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
    const usage = await as(mine, 'GET', `/api/v1/analytics?keyId=${key.body.id}`);
    assert.equal(usage.status, 200);
    assert.ok(!JSON.stringify(usage.body).includes(key.body.id), "the other account's key is nowhere in the usage");
    const theirUsage = await as(otherOwner, 'GET', `/api/v1/analytics?keyId=${key.body.id}`);
    assert.ok(JSON.stringify(theirUsage.body).includes(key.body.id), 'while its own account sees it');
  });

  test("the operator: a reset link for an account's own login, a password set (its sessions end), invitations to any account", async () => {
    const acct = await call('POST', '/api/v1/operator/accounts', { name: 'Linked', email: 'linked@example.com', password: 'the first password' }, { authorization: operator() });
    const before = await login('linked@example.com', 'the first password');
    const link = await call('POST', `/api/v1/operator/accounts/${acct.body.id}/reset-link`, undefined, { authorization: operator() });
    assert.equal(link.status, 201);
    assert.match(link.body.url, /^https:\/\/nodes\.example\.test\/dashboard\/#\/reset\?token=/);
    const reset = await call('POST', '/api/v1/password-reset/complete', { token: tokenOf(link.body.url), password: 'the second password' });
    assert.equal(reset.status, 200);
    assert.equal(reset.body.role, 'owner');
    assert.equal((await as(before, 'GET', '/api/v1/session')).status, 401);
    const second = session(reset);
    const set = await call('PATCH', `/api/v1/operator/accounts/${acct.body.id}`, { password: 'the third password' }, { authorization: operator() });
    assert.equal(set.status, 200);
    assert.equal((await as(second, 'GET', '/api/v1/session')).status, 401, 'a password set by the operator ends the sessions');
    await login('linked@example.com', 'the third password');
    const inv = await call('POST', `/api/v1/operator/accounts/${acct.body.id}/invitations`, { email: 'joiner@example.com', role: 'viewer' }, { authorization: operator() });
    assert.equal(inv.status, 201);
    assert.equal(inv.body.emailed, true);
    const joined = await call('POST', '/api/v1/invitations/accept', { token: tokenOf(inv.body.url), name: 'Joiner', password: 'the joiner password' });
    assert.equal(joined.body.account.email, 'linked@example.com');
    assert.equal(joined.body.role, 'viewer');
  });

  test('sign-up is closed unless configured', async () => {
    assert.deepEqual((await call('GET', '/api/v1/signup')).body, { open: false });
    const r = await call('POST', '/api/v1/signup', { name: 'Eve', email: 'eve@example.com', password: 'eve long password' });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.message, 'sign-up is closed; ask the operator for an invitation');
  });
});

describe('open sign-up, and a gateway without mail', { timeout: 120_000 }, () => {
  let g: TestGateway;
  before(async () => {
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } }, accounts: { openSignup: true } });
  });
  after(async () => g?.close());
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(g.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json(), cookie: res.headers.getSetCookie()[0]?.split(';')[0] };
  };

  test('anyone signs up (logged in, as the owner of a new account); an email already used is a conflict', async () => {
    const res = await fetch(`${g.url}/api/v1/signup`);
    assert.deepEqual(await res.json(), { open: true });
    const r = await post('/api/v1/signup', { name: 'Eve', email: 'eve@example.com', password: 'eve long password' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.role, 'owner');
    assert.equal(r.body.account.email, 'eve@example.com');
    assert.equal(r.body.account.role, 'member', 'never an operator');
    const keys = await fetch(`${g.url}/api/v1/keys`, { headers: { cookie: r.cookie! } });
    assert.deepEqual((await keys.json()).keys, [], 'a new, empty account');
    assert.equal((await post('/api/v1/signup', { name: 'Eve', email: 'EVE@example.com', password: 'eve long password' })).status, 409);
    assert.equal((await post('/api/v1/signup', { name: 'Demo', email: 'demo@localhost', password: 'eve long password' })).status, 409);
    const short = await post('/api/v1/signup', { name: 'Short', email: 'short@example.com', password: 'short' });
    assert.deepEqual([short.status, short.body.error.field], [400, 'password']);
  });

  test('without SMTP an invitation is not mailed (emailed: false, nothing in the outbox); its link names the address listened on', async () => {
    const login = await post('/api/v1/session', { email: 'demo@localhost', password: g.gw.secrets.demoPassword });
    const r = await post('/api/v1/account/invitations', { email: 'new@example.com', role: 'viewer' }, { cookie: login.cookie!, 'x-csrf-token': login.body.csrfToken });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.emailed, false);
    assert.ok(r.body.url.startsWith(`${g.url}/dashboard/#/accept?token=`), r.body.url);
    const reset = await post('/api/v1/password-reset', { email: 'demo@localhost' });
    assert.equal(reset.status, 202);
    assert.equal(g.gw.mail.configured, false);
    assert.deepEqual(await g.gw.store.mail.listMail(10), []);
  });
});
