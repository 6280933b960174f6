/**
 * Dashboard logins and sessions under attack, through the wire: clients act as many addresses and
 * subnets by binding their sockets to 127.0.x.y (loopback covers the whole /8 on Linux). Each test prints what the
 * attacker got and what the real users saw.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

describe('dashboard logins and sessions under attack', { timeout: 420_000 }, () => {
  let g: TestGateway;
  const agents = new Map<string, Agent>();
  const from = (address: string) => {
    let a = agents.get(address);
    if (!a) agents.set(address, (a = new Agent({ localAddress: address, connections: 8 })));
    return a;
  };
  const basicOperator = () => `Basic ${Buffer.from(`${g.gw.secrets.operatorEmail}:${g.gw.secrets.operatorPassword}`).toString('base64')}`;

  interface Res { status: number; body: any; cookie?: string }
  async function call(address: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
    const r = await request(g.url + path, {
      method: method as 'GET', dispatcher: from(address),
      headers: { ...(method !== 'GET' ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? (method !== 'GET' ? '' : undefined) : JSON.stringify(body),
    });
    const text = await r.body.text();
    const set = r.headers['set-cookie'];
    const cookie = (Array.isArray(set) ? set[0] : set)?.split(';')[0];
    return { status: r.statusCode, body: text ? JSON.parse(text) : undefined, cookie };
  }
  const login = (address: string, email: string, password: string) => call(address, 'POST', '/api/v1/session', { email, password });
  const whoAmI = (address: string, cookie: string) => call(address, 'GET', '/api/v1/session', undefined, { cookie });

  let memberSeq = 0;
  /** A member account with a password, made by the operator (from its own address). */
  async function member(role: 'member' | 'operator' = 'member'): Promise<{ id: string; email: string; password: string }> {
    const m = { email: `member${++memberSeq}@example.com`, password: `member-password-${memberSeq}` };
    const r = await call('127.0.0.1', 'POST', '/api/v1/operator/accounts', { name: `Member ${memberSeq}`, role, ...m }, { authorization: basicOperator() });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return { id: r.body.id, ...m };
  }

  before(async () => {
    g = await startTestGateway({ networks: { mainnet: { chainId: 1 } } });
  });
  after(async () => {
    for (const a of agents.values()) await a.close();
    await g?.close();
  });

  test('six addresses flooding unknown-email logins: every real login (member and operator) succeeds', async () => {
    // Seven members and seven operators, each logging in once: each login is a password check of its own (a check
    // remembered from an earlier login would not meet the flood at all). Six more log in for the first time all at
    // once, from six addresses of one /24 (an office): more checks than the /24 may run at a time.
    const members = [];
    const operators = [];
    const together = [];
    for (let i = 0; i < 7; i++) {
      members.push(await member());
      operators.push(await member('operator'));
    }
    for (let i = 0; i < 6; i++) together.push(await member());
    // Quiet first, the same kind of login (a check of its own each), to compare with.
    const quiet: number[] = [];
    for (let i = 0; i < 3; i++) {
      const q = await member();
      const t0 = performance.now();
      assert.equal((await login('127.0.19.1', q.email, q.password)).status, 200);
      quiet.push(performance.now() - t0);
    }
    quiet.sort((a, b) => a - b);
    let stop = false;
    const attack = { checked: 0, refused: 0, other: 0 };
    // Six addresses in six /24s, each offering 4 tries a second with unknown emails, every try
    // sent on time whether the last one was answered or not.
    const attackers = Array.from({ length: 6 }, (_, i) => (async () => {
      const address = `127.0.${11 + i}.1`;
      const pending: Promise<void>[] = [];
      for (let n = 0; !stop; n++) {
        pending.push(login(address, `nobody-${i}-${n}@example.com`, 'wrong-password').then((r) => {
          if (r.status === 401) attack.checked++;
          else if (r.status === 429) attack.refused++;
          else attack.other++;
        }));
        await new Promise((r) => setTimeout(r, 250));
      }
      await Promise.all(pending);
    })());
    // Let the flood fill whatever it can before the real users come.
    await new Promise((r) => setTimeout(r, 1500));
    const real: { who: string; status: number; ms: number }[] = [];
    for (let i = 0; i < 7; i++) {
      let t0 = performance.now();
      const r1 = await login('127.0.20.1', members[i].email, members[i].password);
      real.push({ who: 'member', status: r1.status, ms: performance.now() - t0 });
      t0 = performance.now();
      const r2 = await login('127.0.21.1', operators[i].email, operators[i].password);
      real.push({ who: 'operator', status: r2.status, ms: performance.now() - t0 });
    }
    const t0 = performance.now();
    const office = await Promise.all(together.map((m, i) => login(`127.0.22.${i + 1}`, m.email, m.password)));
    for (const r of office) real.push({ who: 'member at once', status: r.status, ms: performance.now() - t0 });
    stop = true;
    await Promise.all(attackers);
    const refused = real.filter((r) => r.status !== 200);
    const ms = real.map((r) => r.ms).sort((a, b) => a - b);
    console.log(`logins under flood: attackers' tries ${attack.checked} checked (401), ${attack.refused} refused unchecked (429), ${attack.other} other; `
      + `real logins refused ${refused.length} of ${real.length}; real login ms p50 ${ms[Math.floor(ms.length / 2)].toFixed(0)}, max ${ms.at(-1)!.toFixed(0)} `
      + `(quiet, before the flood: p50 ${quiet[1].toFixed(0)})`);
    assert.deepEqual(refused, [], 'no real login refused');
    assert.equal(attack.other, 0);
    assert.ok(attack.refused > 0, 'the flood itself is refused once its addresses have spent their failures');
  });

  test("the right password from a clean address is accepted while another address keeps the email 'locked'", async () => {
    const m = await member();
    const attacker = { checked: 0, backoff: 0 };
    const owner: number[] = [];
    for (let i = 0; i < 15; i++) {
      // Three wrong tries of the attacker's first, every round: enough for the email to back off each time.
      for (let j = 0; j < 3; j++) {
        const a = await login('127.0.30.1', m.email, `wrong-password-${i}-${j}`);
        if (a.status === 401) attacker.checked++;
        else if (a.status === 429) attacker.backoff++;
      }
      owner.push((await login('127.0.31.1', m.email, m.password)).status);
    }
    const refused = owner.filter((s) => s !== 200).length;
    console.log(`email 'locked' by another address: attacker ${attacker.checked} checked, ${attacker.backoff} refused (backoff); the owner's right password refused ${refused} of 15`);
    assert.equal(refused, 0);
    assert.ok(attacker.backoff >= 40, 'the attacking address itself backs off');
  });

  test('a password change checks the current password inside the login bound, and a wrong one counts as a try', async () => {
    const m = await member();
    const address = '127.0.50.1';
    const s = await login(address, m.email, m.password);
    assert.equal(s.status, 200);
    const change = (current: string) => call(address, 'POST', '/api/v1/session/password', { currentPassword: current, newPassword: 'new-password-12345' }, { cookie: s.cookie!, 'x-csrf-token': s.body.csrfToken });
    // 20 wrong current passwords at once: one check at a time from an address, three wrong ones, then it waits.
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => change(`wrong-current-${i}`).then((r) => r.status)));
    const more = [];
    for (let i = 0; i < 5; i++) more.push((await change(`wrong-again-${i}`)).status);
    const all = [...statuses, ...more];
    const checked = all.filter((x) => x === 403).length;
    const refused = all.filter((x) => x === 429).length;
    // Counted: the same address's login to this email now waits, even with the right password.
    const relog = await login(address, m.email, m.password);
    // And another member's login from elsewhere is unaffected.
    const other = await member();
    const t0 = performance.now();
    const otherLogin = await login('127.0.51.1', other.email, other.password);
    const otherMs = performance.now() - t0;
    console.log(`password change: 25 wrong current passwords → ${checked} checked (403), ${refused} refused unchecked (429); `
      + `a login from that address afterwards: ${relog.status}; another member's login: ${otherLogin.status} in ${otherMs.toFixed(0)} ms`);
    assert.equal(checked + refused, 25);
    assert.ok(checked <= 3, `at most 3 wrong current passwords are checked (got ${checked})`);
    assert.equal(relog.status, 429, 'the wrong current passwords counted as failed logins of this email from this address');
    assert.equal(otherLogin.status, 200);
  });

  test('sessions per account are capped (the oldest end) and new sessions are limited per address', async () => {
    const m = await member();
    const cookies: string[] = [];
    for (let i = 0; i < 25; i++) {
      const r = await login(`127.0.${60 + (i % 2)}.1`, m.email, m.password);
      assert.equal(r.status, 200);
      cookies.push(r.cookie!);
    }
    const live = [];
    for (const c of cookies) live.push((await whoAmI('127.0.60.1', c)).status === 200);
    const ended = live.map((l, i) => (l ? -1 : i)).filter((i) => i >= 0);
    // One address logging in again and again: past its burst of 20 it is refused.
    const burst = [];
    for (let i = 0; i < 23; i++) burst.push((await login('127.0.62.1', m.email, m.password)).status);
    console.log(`sessions: 25 logins of one account → ${live.filter(Boolean).length} live, ended: ${ended.join(',')}; `
      + `23 logins from one address → ${burst.filter((s) => s === 200).length} accepted, ${burst.filter((s) => s === 429).length} refused (429)`);
    assert.deepEqual(ended, [0, 1, 2, 3, 4], 'the five oldest sessions ended, the newest 20 live');
    assert.equal(burst.filter((s) => s === 200).length, 20);
    assert.equal(burst.filter((s) => s === 429).length, 3);
  });

  test('suspending an account ends its sessions: the old cookie is refused after reactivation', async () => {
    const m = await member();
    const s = await login('127.0.70.1', m.email, m.password);
    assert.equal((await whoAmI('127.0.70.1', s.cookie!)).status, 200);
    const op = { authorization: basicOperator() };
    assert.equal((await call('127.0.0.1', 'POST', `/api/v1/operator/accounts/${m.id}/suspend`, undefined, op)).status, 200);
    const during = (await whoAmI('127.0.70.1', s.cookie!)).status;
    assert.equal((await call('127.0.0.1', 'POST', `/api/v1/operator/accounts/${m.id}/reactivate`, undefined, op)).status, 200);
    const afterwards = (await whoAmI('127.0.70.1', s.cookie!)).status;
    const fresh = await login('127.0.70.1', m.email, m.password);
    console.log(`suspension: the old session while suspended ${during}, after reactivation ${afterwards}; a new login ${fresh.status}`);
    assert.equal(during, 401);
    assert.equal(afterwards, 401, 'the old session does not come back');
    assert.equal(fresh.status, 200);
  });
});
