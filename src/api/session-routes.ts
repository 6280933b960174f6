import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Account } from '../store/accounts/account.ts';
import type { Member } from '../store/team/member.ts';
import type { AccountsService } from '../accounts/service.ts';
import type { Login, TeamService } from '../accounts/team.ts';
import type { UnknownKeyGuard } from '../limits/unknown-key-guard.ts';
import { addressAndSubnet } from '../limits/subnet.ts';
import type { EventBudgets } from '../shared-state/event-budget/event-budget.ts';
import { eventBudget } from '../shared-state/event-budget/event-budgets.ts';
import { ApiError } from './errors.ts';
import { errorResponses } from './schemas.ts';
import { PasswordCheckRefused, type PasswordLogins } from './password-login.ts';
import { SESSION_COOKIE, type Sessions } from './sessions.ts';

const tags = ['session'];
const LOGIN_FAILED = 'wrong email or password';

interface Opts {
  accounts: AccountsService;
  team: TeamService;
  logins: PasswordLogins;
  sessions: Sessions;
  guard: UnknownKeyGuard;
  /** The account routes' authentication: the session (with its CSRF token on changes) or an admin key. */
  authenticate: onRequestAsyncHookHandler;
  /** Successful logins (new sessions) per client address: a rate per minute and a burst. */
  sessionsPerAddress: { perMinute: number; burst: number };
  /** The shared state's budgets: new sessions per address are counted across processes (Redis, the workers' primary). */
  shared?: EventBudgets;
}

const who = (a: Account) => ({ id: a.id, name: a.name, email: a.email, role: a.role, planId: a.planId });
const memberOf = (m: Member | undefined) => (m ? { id: m.id, email: m.email, name: m.name, role: m.role } : null);

/** The answer of every route that logs in (which login, and its role in the account). */
export function sessionAnswer(login: Login, session: { csrf: string; expiresAt: string }) {
  return { account: who(login.account), member: memberOf(login.member), role: login.member?.role ?? 'owner', csrfToken: session.csrf, expiresAt: session.expiresAt };
}

/** The session cookie: HttpOnly, SameSite=Strict, Secure over TLS. */
export function setSessionCookie(req: FastifyRequest, reply: FastifyReply, value: string, maxAge: number): void {
  reply.setCookie(SESSION_COOKIE, value, { httpOnly: true, sameSite: 'strict', secure: req.protocol === 'https', path: '/', maxAge });
}

/** Logs `login` in: a new session, its cookie set on the reply, and the answer of POST /session. */
export async function logIn(req: FastifyRequest, reply: FastifyReply, sessions: Sessions, login: Login) {
  const { value, session } = await sessions.create(login.account, login.member?.id ?? null);
  setSessionCookie(req, reply, value, sessions.maxAgeSeconds);
  req.log.info({ accountId: login.account.id, memberId: login.member?.id }, 'dashboard login');
  return sessionAnswer(login, session);
}

/**
 * Dashboard logins (docs/decisions.md §6): `POST /session` with email and password sets the session cookie and answers the
 * CSRF token; `GET /session` answers who is logged in (and the token again, for a reloaded page); `DELETE /session`
 * logs out; `POST /session/password` changes the password and ends every other session of the account. Failed
 * logins spend the client IP's failures (as keys do) and the email's backoff (src/api/password-login.ts), and all
 * get one identical 401. New sessions are limited per client address too (924 sessions a second from one
 * script before), checked before the password is, and each account keeps at most a few (src/api/sessions.ts).
 */
export async function sessionRoutes(api: FastifyInstance, opts: Opts) {
  const { sessions, logins, guard, accounts } = opts;
  const perSecond = opts.sessionsPerAddress.perMinute / 60;
  const created = eventBudget('sessions', { perSecond, burst: opts.sessionsPerAddress.burst }, opts.shared);
  const refused = (err: unknown) => err instanceof PasswordCheckRefused
    ? new ApiError(429, 'too_many_requests', err.message, undefined, { 'retry-after': String(err.retryAfterSeconds) })
    : err;
  const setCookie = setSessionCookie;

  api.post<{ Body: { email: string; password: string } }>('/session', {
    schema: {
      summary: 'Log in to the dashboard (sets the session cookie; answers the CSRF token)', tags, security: [], response: errorResponses(400, 401),
      body: { type: 'object', additionalProperties: false, required: ['email', 'password'], properties: { email: { type: 'string', maxLength: 320 }, password: { type: 'string', maxLength: 1024 } } },
    },
  }, async (req, reply) => {
    const tooMany = (s: number) => new ApiError(429, 'too_many_requests', 'too many failed logins from this address', undefined, { 'retry-after': String(s) });
    if (await guard.exhausted(req.ip)) throw tooMany(1);
    const address = addressAndSubnet(req.ip).address;
    if (await created.exhausted(address)) {
      throw new ApiError(429, 'too_many_requests', 'too many logins from this address', undefined, { 'retry-after': String(Math.ceil(1 / perSecond)) });
    }
    let login: Login | undefined;
    try {
      login = await logins.loginAs(req.body.email, req.body.password, req.ip);
    } catch (err) {
      throw refused(err);
    }
    if (!login) {
      const retryAfter = await guard.failed(req.ip);
      if (retryAfter !== undefined) throw tooMany(retryAfter);
      throw new ApiError(401, 'unauthorized', LOGIN_FAILED);
    }
    // Said only after the right password: whoever holds it is the member, and "wrong password" would send them
    // resetting a password that is not the problem.
    if (login.account.status !== 'active') throw new ApiError(403, 'forbidden', 'the account is suspended: ask the operator of this gateway to reactivate it');
    await created.spend(address);
    return logIn(req, reply, sessions, login);
  });

  // Asked by every load of the dashboard: a visitor without a session is not a failed authentication (no IP
  // failure is spent), just not logged in.
  api.get('/session', { schema: { summary: 'Who is logged in, and the CSRF token of the session', tags, security: [{ session: [] }], response: errorResponses(401) } }, async (req) => {
    const s = await sessions.find(req.cookies[SESSION_COOKIE]);
    const account = s && (await accounts.getAccount(s.accountId).catch(() => undefined));
    if (!s || !account || account.status !== 'active') throw new ApiError(401, 'unauthorized', 'not logged in');
    const member = s.memberId ? await accounts.store.members.getMember(s.memberId) : undefined;
    if (s.memberId && member?.accountId !== account.id) throw new ApiError(401, 'unauthorized', 'not logged in');
    return sessionAnswer({ account, member }, s);
  });

  api.register(async (authed) => {
    authed.addHook('onRequest', opts.authenticate);
    const session = (req: FastifyRequest) => {
      if (!req.principal?.session) throw new ApiError(400, 'bad_request', 'this route is for the dashboard session (cookie), not for a key');
      return req.principal.session;
    };


    authed.delete('/session', { schema: { summary: 'Log out', tags, security: [{ session: [] }], response: errorResponses(400, 401, 403) } }, async (req, reply) => {
      session(req);
      await sessions.end(req.cookies[SESSION_COOKIE]!);
      setCookie(req, reply, '', 0);
      return reply.code(204).send();
    });

    authed.post<{ Body: { currentPassword: string; newPassword: string } }>('/session/password', {
      schema: {
        summary: 'Change the password: every session of the account ends, this one is replaced', tags, security: [{ session: [] }], response: errorResponses(400, 401, 403),
        body: { type: 'object', additionalProperties: false, required: ['currentPassword', 'newPassword'], properties: { currentPassword: { type: 'string', maxLength: 1024 }, newPassword: { type: 'string', maxLength: 1024 } } },
      },
    }, async (req, reply) => {
      session(req);
      const { account, member } = req.principal!;
      // Inside the logins' bound and counted as a try: unbounded, a logged-in member could keep the
      // scrypt slots' CPU busy and slow everyone's login (755 → 13,379 ms).
      let ok: boolean;
      try {
        ok = await logins.verifyCurrent(member ?? account, req.body.currentPassword, req.ip);
      } catch (err) {
        throw refused(err);
      }
      if (!ok) throw new ApiError(403, 'forbidden', 'the current password is wrong');
      // Only this login's sessions end: a member's new password does not log out the rest of the team.
      let login: Login;
      if (member) login = { account, member: await opts.team.setMemberPassword(member, req.body.newPassword) };
      else {
        login = { account: await accounts.updateAccount(account.id, { password: req.body.newPassword }) };
        await sessions.endAll(account.id, null);
      }
      const { value, session: s } = await sessions.create(login.account, login.member?.id ?? null);
      setCookie(req, reply, value, sessions.maxAgeSeconds);
      req.log.info({ accountId: account.id, memberId: member?.id }, 'password changed; other sessions ended');
      return sessionAnswer(login, s);
    });
  });
}
