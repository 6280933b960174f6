import type { FastifyRequest } from 'fastify';
import '@fastify/cookie';
import type { Account } from '../store/accounts/account.ts';
import type { Member, MemberRole } from '../store/team/member.ts';
import type { Permission } from '../store/keys/api-key.ts';
import { refusal, type Action } from '../accounts/roles.ts';
import { grantRefusal } from '../accounts/key-grants.ts';
import { ipAllowed } from '../auth/ip-allowlist.ts';
import type { KeyResolver, ResolvedKey } from '../auth/key-resolver.ts';
import type { UnknownKeyGuard } from '../limits/unknown-key-guard.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { EventBudgets } from '../shared-state/event-budget/event-budget.ts';
import { eventBudget } from '../shared-state/event-budget/event-budgets.ts';
import { ApiError } from './errors.ts';
import { PasswordCheckRefused, type PasswordLogins } from './password-login.ts';
import { csrfMatches, SESSION_COOKIE, type Sessions } from './sessions.ts';
import type { AccountStore } from '../store/accounts/account-store.ts';
import type { MemberStore } from '../store/team/member-store.ts';

/** Who is calling: the account, and the key when it came with one (Bearer), or the dashboard session it used. */
export interface Principal {
  account: Account;
  /** What this login may do in the account (accounts/roles.ts): `owner` for the account's own login and its keys. */
  role: MemberRole;
  /** The member logged in, when it is one of the account's members. */
  member?: Member;
  key?: ResolvedKey;
  /** The session's id hash, when the call came with the session cookie. */
  session?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, set by the management API's authentication hooks (only on its routes). */
    principal: Principal | null;
  }
}

const BEARER = 'Bearer realm="nodegate"';
const BASIC = 'Basic realm="nodegate operator", charset="UTF-8"';
/** The one answer to every failed password login. */
const LOGIN_FAILED = 'wrong email or password';

/**
 * The two ways into the management API, as onRequest hooks (so nothing is parsed for an unauthenticated caller):
 * `account` needs a Bearer key with the `admin` permission; `operator` needs an operator account's owner, by Basic
 * email:password or the dashboard session, or a key with the `operator` permission. Failures are 401 with `WWW-Authenticate` (nothing or wrong given) or 403
 * (valid, but not enough); messages never repeat what was sent. Each 401 spends from the client IP's bucket in
 * `guard`; an IP with an empty bucket gets 429 for its failures, and before any password is checked (docs/decisions.md §7:
 * no guessing keys or passwords at speed; it also keeps one client from holding the few scrypt slots), while a
 * valid admin key from it still passes.
 */
export function apiAuthentication(keys: KeyResolver, logins: PasswordLogins, guard: UnknownKeyGuard, rate: { perSecond: number; burst: number }, sessions: Sessions, store: { accounts: AccountStore; members: MemberStore }, shared?: EventBudgets) {
  // Across instances in cluster mode: an account's calls spread over N instances get the rate once.
  const perAccount = eventBudget('mgmt', rate, shared);

  /**
   * The dashboard's session cookie, when no Authorization header was sent. Every change (any method but GET and
   * HEAD) must carry the session's CSRF token in `X-CSRF-Token`: a page elsewhere can make the browser send the
   * cookie, never read the token.
   */
  async function bySession(req: FastifyRequest): Promise<Principal | undefined> {
    const value = req.cookies?.[SESSION_COOKIE];
    if (!value) return undefined;
    const session = await sessions.find(value);
    if (!session) throw unauthorized('the session has ended; log in again', BEARER);
    const account = await store.accounts.getAccount(session.accountId);
    if (!account || account.status !== 'active') throw unauthorized('the session has ended; log in again', BEARER);
    // A member's session: the member must still be one of the account's (removal also deletes the session).
    const member = session.memberId ? await store.members.getMember(session.memberId) : undefined;
    if (session.memberId && (!member || member.accountId !== account.id)) throw unauthorized('the session has ended; log in again', BEARER);
    if (req.method !== 'GET' && req.method !== 'HEAD' && !csrfMatches(req.headers['x-csrf-token'], session.csrf)) {
      throw forbidden('a change made with the dashboard session needs its CSRF token in X-CSRF-Token');
    }
    return { account, member, role: member?.role ?? 'owner', session: session.idHash };
  }
  async function byKey(req: FastifyRequest, value: string, challenge: string, permission: 'admin' | 'analytics' | 'webhooks' | 'operator' = 'admin'): Promise<Principal> {
    let k: ResolvedKey;
    try {
      k = await keys.resolve(value);
    } catch (err) {
      if (err instanceof GatewayError && err.status === 401) throw unauthorized(err.message, challenge);
      throw err;
    }
    // A key that requires a JWT is worth nothing without one: here, where Bearer already carries the key, it has no
    // place for the token, so the key alone must not open what the JSON-RPC endpoint would refuse it.
    if (k.jwt) throw unauthorized('this key requires a JWT, which the management API cannot take: use another key or a login', challenge);
    if (!k.key.permissions.includes(permission)) throw forbidden(`the key lacks the ${permission} permission`);
    // The key's own restrictions hold here too: its IP allowlist, and its origin allowlist for browser calls.
    if (k.ipRanges && !ipAllowed(req.ip, k.ipRanges)) throw forbidden(`IP address ${req.ip} is not in the key's allowlist`);
    const origin = req.headers.origin;
    if (k.origins && origin && !k.origins.has(origin)) throw forbidden(`origin ${origin.slice(0, 200)} is not in the key's allowlist`);
    keys.used(k);
    return { account: k.account, key: k, role: 'owner' };
  }

  /**
   * Every failed login gets the one same 401, whatever failed (no such email, a wrong password, a suspended
   * account, no operator role): an answer that told them apart would tell a guesser which emails exist and what
   * they are. A login not even checked (too many checks waiting, or the email backing off after failures) is 429.
   */
  async function byPassword(header: string, ip: string, role?: 'operator'): Promise<Principal> {
    const decoded = Buffer.from(header, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon <= 0) throw unauthorized(LOGIN_FAILED, BASIC);
    let login: { account: Account; member?: Member } | undefined;
    try {
      login = await logins.loginAs(decoded.slice(0, colon), decoded.slice(colon + 1), ip);
    } catch (err) {
      if (err instanceof PasswordCheckRefused) {
        throw new ApiError(429, 'too_many_requests', err.message, undefined, { 'retry-after': String(err.retryAfterSeconds) });
      }
      throw err;
    }
    const account = login?.account;
    const memberRole = login?.member?.role ?? 'owner';
    // Operator-ness is the account's; a member of an operator account is an operator only as its owner.
    if (!account || account.status !== 'active' || (role && (account.role !== role || memberRole !== 'owner'))) throw unauthorized(LOGIN_FAILED, BASIC);
    return { account, member: login!.member, role: memberRole };
  }

  const tooMany = (retryAfter: number) =>
    new ApiError(429, 'too_many_requests', 'too many failed authentications from this address', undefined, { 'retry-after': String(retryAfter) });

  /**
   * Failures count per IP; only failures are refused once it has none left, so a valid admin key keeps working from
   * an address someone guesses from. A password is checked only while the IP has failures left: the check itself
   * (a deliberately slow hash) is the work a guesser would otherwise get for free.
   */
  const guarded = (authenticate: (req: FastifyRequest) => Promise<void>) => async (req: FastifyRequest): Promise<void> => {
    if (credentials(req)[0] === 'basic' && (await guard.exhausted(req.ip))) throw tooMany(1);
    try {
      await authenticate(req);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        const retryAfter = await guard.failed(req.ip);
        if (retryAfter !== undefined) throw tooMany(retryAfter);
      }
      throw err;
    }
    // Each account's own calls are limited too: the API writes to the store and lists, the hot path does neither.
    const retryAfter = await perAccount.spend(req.principal!.account.id);
    if (retryAfter !== undefined) {
      throw new ApiError(429, 'too_many_requests', `more than ${rate.perSecond} management calls per second from this account`, undefined, { 'retry-after': String(retryAfter) });
    }
  };

  function sessionOrKey(permission: 'analytics' | 'webhooks') {
    return guarded(async (req) => {
      const [scheme, value] = credentials(req);
      if (!scheme) {
        const p = await bySession(req);
        if (p) {
          req.principal = p;
          // Webhooks' changes are a developer's (accounts/roles.ts); reading is everyone's.
          if (permission === 'webhooks' && req.method !== 'GET' && req.method !== 'HEAD') requireRole(req, 'changeWebhooks');
          return;
        }
      }
      if (scheme !== 'bearer' || !value) throw unauthorized(`an API key with the ${permission} permission, or the dashboard session, is required: Authorization: Bearer <key>`, BEARER);
      req.principal = await byKey(req, value, BEARER, permission);
    });
  }

  return {
    account: guarded(async (req) => {
      const [scheme, value] = credentials(req);
      if (!scheme) {
        const p = await bySession(req);
        if (p) return void (req.principal = p);
      }
      if (scheme !== 'bearer' || !value) throw unauthorized('an API key with the admin permission, or the dashboard session, is required: Authorization: Bearer <key>', BEARER);
      req.principal = await byKey(req, value, BEARER);
    }),

    /** Usage analytics: the session, or a key with the `analytics` permission (docs/decisions.md §6). */
    analytics: sessionOrKey('analytics'),
    /** Webhooks: the session, or a key with the `webhooks` permission (docs/decisions.md §6). */
    webhooks: sessionOrKey('webhooks'),

    operator: guarded(async (req) => {
      const [scheme, value] = credentials(req);
      const both = `${BASIC}, ${BEARER}`;
      let p: Principal | undefined;
      if (!scheme) p = await bySession(req);
      if (p) { /* the dashboard session of an account: its role is checked below */ }
      else if (scheme === 'basic' && value) p = await byPassword(value, req.ip, 'operator');
      // A key is an operator only when it says so (the `operator` permission, given by an operator in person): an
      // admin key of the operator's account is that account's owner, not the operator of every account.
      else if (scheme === 'bearer' && value) p = await byKey(req, value, both, 'operator');
      else throw unauthorized('operator credentials are required: Basic email:password, or Bearer <key with the operator permission>', both);
      if (p.account.role !== 'operator' || p.role !== 'owner') throw forbidden('the operator role is required');
      req.principal = p;
    }),
  };
}

/**
 * Refuses (403 forbidden, "a viewer cannot …") a caller whose role may not do `action` (accounts/roles.ts, the one
 * place of the rules). For routes after an authentication hook: the principal is set.
 */
export function requireRole(req: FastifyRequest, action: Action): void {
  const why = req.principal && refusal(req.principal.role, action);
  if (why) throw forbidden(why);
}

/**
 * Refuses (403 forbidden) a caller who would give a key more than they hold (accounts/key-grants.ts): a developer
 * cannot grant `admin`, and only an operator in person grants `operator`.
 */
export function requireGrant(req: FastifyRequest, permissions: readonly Permission[]): void {
  const p = req.principal!;
  const why = grantRefusal({ role: p.role, person: !p.key, accountRole: p.account.role }, permissions);
  if (why) throw forbidden(why);
}

/** The member a key made by this caller is recorded as made by: the member in person, or the maker of their key. */
export function makerOf(req: FastifyRequest): string | null {
  const p = req.principal!;
  return p.member?.id ?? p.key?.key.createdBy ?? null;
}

function credentials(req: FastifyRequest): [string, string] {
  const h = req.headers.authorization ?? '';
  const space = h.indexOf(' ');
  if (space === -1) return [h.toLowerCase(), ''];
  return [h.slice(0, space).toLowerCase(), h.slice(space + 1).trim()];
}

function unauthorized(message: string, challenge: string): ApiError {
  return new ApiError(401, 'unauthorized', message, undefined, { 'www-authenticate': challenge });
}

function forbidden(message: string): ApiError {
  return new ApiError(403, 'forbidden', message);
}
