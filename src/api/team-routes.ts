import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { MemberRole } from '../store/team/member.ts';
import { BAD_LINK, type TeamService } from '../accounts/team.ts';
import type { UnknownKeyGuard } from '../limits/unknown-key-guard.ts';
import type { EventBudget, EventBudgets } from '../shared-state/event-budget/event-budget.ts';
import { eventBudget } from '../shared-state/event-budget/event-budgets.ts';
import { addressAndSubnet } from '../limits/subnet.ts';
import { requireRole } from './auth.ts';
import { ApiError, toApiError } from './errors.ts';
import { errorResponses, idParams } from './schemas.ts';
import { logIn } from './session-routes.ts';
import type { Sessions } from './sessions.ts';

type Id = { Params: { id: string } };
const ROLE = { type: 'string', enum: ['owner', 'developer', 'viewer'] } as const;
const EMAIL = { type: 'string', minLength: 3, maxLength: 320 } as const;
const TOKEN = { type: 'string', minLength: 1, maxLength: 200 } as const;
const PASSWORD = { type: 'string', maxLength: 1024, description: 'At least 12 characters' } as const;
const NAME = { type: 'string', minLength: 1, maxLength: 200 } as const;
const inviteBody = { type: 'object', additionalProperties: false, required: ['email', 'role'], properties: { email: EMAIL, role: ROLE } } as const;

/** The one answer of POST /password-reset, whatever the email (no enumeration). */
export const RESET_ANSWER = { message: 'if an account uses this email, a reset link is on its way' };

/**
 * Team routes of the calling account: its members, invitations and roles. Reading is any role's;
 * changes are the owner's (accounts/roles.ts). Members and invitations of another account are 404, like missing ones.
 */
export async function teamRoutes(api: FastifyInstance, opts: { team: TeamService; authenticate: onRequestAsyncHookHandler }) {
  const { team } = opts;
  const tags = ['team'];
  const security: Record<string, string[]>[] = [{ session: [] }, { apiKey: [] }];
  api.addHook('onRequest', opts.authenticate);
  const me = (req: FastifyRequest) => req.principal!.account.id;
  const by = (req: FastifyRequest) => req.principal!.member?.name ?? req.principal!.account.name;

  api.get('/account/members', { schema: { summary: "The account's own login, its members and its pending invitations", tags, security, response: errorResponses(401, 403) } },
    async (req) => team.team(me(req)));

  api.post<{ Body: { email: string; role: MemberRole } }>('/account/invitations', {
    schema: { summary: 'Invite someone to the account (a single-use link, mailed when mail is configured; the same answer whether the email has a login or not)', tags, security, body: inviteBody, response: errorResponses(400, 401, 403, 429) },
  }, async (req, reply) => {
    requireRole(req, 'manageTeam');
    ownerInPerson(req, req.body.role);
    return reply.code(201).send(await team.invite(me(req), req.body.email, req.body.role, by(req)));
  });

  api.delete<Id>('/account/invitations/:id', { schema: { summary: 'Withdraw an invitation', tags, security, params: idParams, response: errorResponses(401, 403, 404) } }, async (req, reply) => {
    requireRole(req, 'manageTeam');
    await team.withdrawInvitation(me(req), req.params.id);
    return reply.code(204).send();
  });

  api.patch<Id & { Body: { role: MemberRole } }>('/account/members/:id', {
    schema: { summary: "Change a member's role", tags, security, params: idParams, body: { type: 'object', additionalProperties: false, required: ['role'], properties: { role: ROLE } }, response: errorResponses(400, 401, 403, 404) },
  }, async (req) => {
    requireRole(req, 'manageTeam');
    ownerInPerson(req, req.body.role);
    return team.changeRole(me(req), req.params.id, req.body.role);
  });

  api.delete<Id>('/account/members/:id', { schema: { summary: 'Remove a member (their sessions end)', tags, security, params: idParams, response: errorResponses(401, 403, 404) } }, async (req, reply) => {
    requireRole(req, 'manageTeam');
    await team.remove(me(req), req.params.id);
    return reply.code(204).send();
  });
}

/**
 * An owner of the operator's account is an operator (auth.ts), so making one is the operator's own act: a key of
 * that account (an admin key is its owner) cannot invite or promote an owner, or it would mint an operator login.
 */
function ownerInPerson(req: FastifyRequest, role: MemberRole): void {
  const p = req.principal!;
  if (role === 'owner' && p.account.role === 'operator' && p.key) {
    throw new ApiError(403, 'forbidden', "a key cannot make an owner of the operator's account; an operator does that in person");
  }
}

interface PublicOpts {
  team: TeamService;
  sessions: Sessions;
  guard: UnknownKeyGuard;
  shared?: EventBudgets;
  log: { warn(obj: object, msg: string): void };
  /** Whether mail.smtp.host is set: without it no reset link can be mailed, and the answer says so. */
  mailConfigured: boolean;
}

/** The answer of POST /password-reset on a gateway that cannot send mail: the same whatever the email. */
export const RESET_WITHOUT_MAIL = {
  message: 'mail is not configured on this gateway, so no reset link can be mailed: ask the operator for a reset link (the Accounts page, or nodegate accounts reset-link)',
  mail: false,
};

/** Calls of the public routes per client address: a burst of 30, then one every 10 s. */
const PUBLIC_RATE = { perSecond: 1 / 10, burst: 30 };
/**
 * The same per /24 (IPv4) or /64 (IPv6), twice the address's: one host holds a whole /64, and a /24 is often one
 * client's, so counting per address alone gave ten addresses ten budgets.
 */
const PUBLIC_SUBNET_RATE = { perSecond: 1 / 5, burst: 60 };
/**
 * Sign-ups per address (3, then one every 20 minutes) and per /24 or /64 (10, then one every 6 minutes): an account
 * is a store row, a plan's free quota and a scrypt hash, so making them is bounded far below the other public calls
 * (107 accounts were made in 44 s from ten addresses of one /24).
 */
const SIGNUP_RATE = { perSecond: 1 / 1200, burst: 3 };
const SIGNUP_SUBNET_RATE = { perSecond: 1 / 360, burst: 10 };
/** Reset mails per email: 5, then one every 12 minutes (past it: quietly not sent). */
const RESET_MAIL_RATE = { perSecond: 1 / 720, burst: 5 };

/**
 * The routes without authentication: accepting an invitation, sign-up, and password reset. Each is
 * limited per client address; a bad link spends the address's failures (as an unknown key does), so links cannot be
 * guessed at speed (they are 256-bit anyway). The reset request answers the same, at once, for every email: the
 * lookup and the mail are done after the answer.
 */
export async function publicAccountRoutes(api: FastifyInstance, opts: PublicOpts) {
  const { team, sessions, guard } = opts;
  const tags = ['session'];
  const perAddress = eventBudget('accounts-public', PUBLIC_RATE, opts.shared);
  const perSubnet = eventBudget('accounts-public:s', PUBLIC_SUBNET_RATE, opts.shared);
  const signupsPerAddress = eventBudget('signup', SIGNUP_RATE, opts.shared);
  const signupsPerSubnet = eventBudget('signup:s', SIGNUP_SUBNET_RATE, opts.shared);
  const perEmail = eventBudget('reset-mail', RESET_MAIL_RATE, opts.shared);
  const tooMany = (s: number) => new ApiError(429, 'too_many_requests', 'too many requests from this address', undefined, { 'retry-after': String(s) });

  /** Spends one from the address's and its subnet's budgets; refused (429) while either is empty. */
  const spendBoth = async (ip: string, address: EventBudget, subnet: EventBudget) => {
    const where = addressAndSubnet(ip);
    const a = await address.spend(where.address);
    const s = a === undefined ? await subnet.spend(where.subnet) : undefined;
    if (a !== undefined || s !== undefined) throw tooMany(a ?? s!);
  };
  // Every public route: refused while the address has no failures, or it or its subnet no calls, left.
  api.addHook('onRequest', async (req) => {
    if (await guard.exhausted(req.ip)) throw tooMany(1);
    await spendBoth(req.ip, perAddress, perSubnet);
  });
  /** A bad token spends a failure of the address. */
  const spendingFailures = async <T>(req: FastifyRequest, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      const e = toApiError(err);
      if (e.field !== 'token') throw err;
      const retryAfter = await guard.failed(req.ip);
      if (retryAfter !== undefined) throw tooMany(retryAfter);
      // One message for a bad, a used and an expired link (which one it was is nobody's business).
      throw new ApiError(400, 'validation_failed', BAD_LINK, 'token');
    }
  };

  // POST, not GET: the token stays out of URLs and their logs.
  api.post<{ Body: { token: string } }>('/invitations/preview', {
    schema: {
      summary: "What an invitation is for (the account's name, the role, the email invited), before it is accepted", tags, security: [], response: errorResponses(400, 429),
      body: { type: 'object', additionalProperties: false, required: ['token'], properties: { token: TOKEN } },
    },
  }, async (req) => spendingFailures(req, () => team.invitation(req.body.token)));

  api.post<{ Body: { token: string; name: string; password: string } }>('/invitations/accept', {
    schema: {
      summary: 'Accept an invitation: become a member with this name and password (logged in)', tags, security: [], response: errorResponses(400, 409, 429),
      body: { type: 'object', additionalProperties: false, required: ['token', 'name', 'password'], properties: { token: TOKEN, name: NAME, password: PASSWORD } },
    },
  }, async (req, reply) => {
    const login = await spendingFailures(req, () => team.accept(req.body.token, req.body.name, req.body.password));
    return logIn(req, reply, sessions, login);
  });

  api.get('/signup', { schema: { summary: 'Whether anyone may sign up', tags, security: [], response: errorResponses(429) } }, async () => ({ open: team.signupOpen }));

  api.post<{ Body: { name: string; email: string; password: string } }>('/signup', {
    schema: {
      summary: 'Create an account (only when accounts.openSignup is true; logged in)', tags, security: [], response: errorResponses(400, 403, 409, 429),
      body: { type: 'object', additionalProperties: false, required: ['name', 'email', 'password'], properties: { name: NAME, email: EMAIL, password: PASSWORD } },
    },
  }, async (req, reply) => {
    if (!team.signupOpen) throw new ApiError(403, 'forbidden', 'sign-up is closed; ask the operator for an invitation');
    // Accounts made count (a refused or mistyped sign-up does not), asked before any work.
    const where = addressAndSubnet(req.ip);
    if ((await signupsPerAddress.exhausted(where.address)) || (await signupsPerSubnet.exhausted(where.subnet))) {
      throw new ApiError(429, 'too_many_requests', 'too many accounts made from this address or its network just now', undefined, { 'retry-after': '360' });
    }
    const login = await team.signup(req.body.name, req.body.email, req.body.password);
    await Promise.all([signupsPerAddress.spend(where.address), signupsPerSubnet.spend(where.subnet)]);
    return reply.code(201).send(await logIn(req, reply, sessions, login));
  });

  api.post<{ Body: { email: string } }>('/password-reset', {
    schema: {
      summary: 'Ask for a password reset link by mail (always the same answer)', tags, security: [], response: errorResponses(400, 429),
      body: { type: 'object', additionalProperties: false, required: ['email'], properties: { email: EMAIL } },
    },
  }, async (req, reply) => {
    if (!opts.mailConfigured) return reply.code(202).send(RESET_WITHOUT_MAIL);
    const email = req.body.email.trim().toLowerCase();
    // After the answer: whether the email exists, and whether a mail is written, takes no time the caller sees.
    setImmediate(() => {
      void (async () => {
        // Per email: past the budget, quietly not sent (the answer is the same).
        if ((await perEmail.spend(email)) !== undefined) return;
        await team.requestReset(email);
      })().catch((err: Error) => opts.log.warn({ err: err.message }, 'password reset not written'));
    });
    return reply.code(202).send(RESET_ANSWER);
  });

  api.post<{ Body: { token: string; password: string } }>('/password-reset/complete', {
    schema: {
      summary: "Set a new password with a reset link's token (logged in; the login's other sessions end)", tags, security: [], response: errorResponses(400, 429),
      body: { type: 'object', additionalProperties: false, required: ['token', 'password'], properties: { token: TOKEN, password: PASSWORD } },
    },
  }, async (req, reply) => {
    const login = await spendingFailures(req, () => team.completeReset(req.body.token, req.body.password));
    return logIn(req, reply, sessions, login);
  });
}

