import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AccountsService, NewAccountInput, NewKeyInput, PlanInput } from '../accounts/service.ts';
import type { TeamService } from '../accounts/team.ts';
import type { MemberRole } from '../store/team/member.ts';
import type { AccountPatch } from '../store/accounts/account-store.ts';
import type { PlanPatch } from '../store/plans/plan-store.ts';
import { ApiError } from './errors.ts';
import { requireGrant } from './auth.ts';
import { permissionsFor } from '../store/keys/api-key.ts';
import { accountPatchBody, errorResponses, idParams, listOf, newAccountBody, newKeyBody, newPlanBody, pageOf, pageQuery, planPatchBody, ref } from './schemas.ts';

const security: Record<string, string[]>[] = [{ operatorPassword: [] }, { apiKey: [] }];
type Id = { Params: { id: string } };
type AccountChange = Omit<AccountPatch, 'passwordHash' | 'status'> & { password?: string };

/**
 * The operator's routes under `/operator` (docs/decisions.md §6: the operator administers accounts, plans and keys): Basic
 * email:password or the dashboard session of an operator account's owner, or a Bearer key with the `operator` permission. Everything goes through AccountsService,
 * which holds the rules and drops the key cache on every change.
 */
export async function operatorRoutes(api: FastifyInstance, opts: { accounts: AccountsService; team: TeamService; authenticate: onRequestAsyncHookHandler }) {
  const { accounts, team } = opts;
  api.addHook('onRequest', opts.authenticate);
  const s = (tag: string, summary: string, rest: Record<string, unknown>, ...errors: number[]) => ({
    schema: { summary, tags: [`operator: ${tag}`], security, ...rest, response: { ...(rest.response as object), ...errorResponses(401, 403, ...errors) } },
  });

  // Plans --------------------------------------------------------------------------------------------------
  const plansList = listOf('plans', 'Plan', 'The plans, and the one an account made without a choice gets');
  api.get('/plans', s('plans', 'All plans, and the default plan of new accounts', { response: { 200: { ...plansList, properties: { ...plansList.properties, defaultPlan: { type: 'string' } } } } }),
    async () => ({ plans: await accounts.listPlans(), defaultPlan: accounts.defaultPlan }));

  api.post<{ Body: PlanInput }>('/plans', s('plans', 'Create a plan', { body: newPlanBody, response: { 201: ref('Plan', 'The plan') } }, 400, 409),
    async (req, reply) => reply.code(201).send(await accounts.createPlan(req.body)));

  api.get<Id>('/plans/:id', s('plans', 'One plan', { params: idParams, response: { 200: ref('Plan', 'The plan') } }, 404),
    async (req) => accounts.getPlan(req.params.id));

  api.patch<Id & { Body: PlanPatch }>('/plans/:id', s('plans', "Change a plan's name or limits (effective on the next request)", { params: idParams, body: planPatchBody, response: { 200: ref('Plan', 'The changed plan') } }, 400, 404),
    async (req) => accounts.updatePlan(req.params.id, req.body));

  api.delete<Id>('/plans/:id', s('plans', 'Delete a plan; refused (409) while an account is on it', { params: idParams, response: { 204: { description: 'Deleted', type: 'null' } } }, 404, 409),
    async (req, reply) => {
      await accounts.deletePlan(req.params.id);
      return reply.code(204).send();
    });

  // Accounts -----------------------------------------------------------------------------------------------
  api.get('/accounts', s('accounts', 'All accounts', { response: { 200: listOf('accounts', 'Account', 'The accounts') } }), async () => ({ accounts: await accounts.listAccounts() }));

  api.post<{ Body: NewAccountInput }>('/accounts', s('accounts', 'Create an account (role member and the default plan unless given)', { body: newAccountBody, response: { 201: ref('Account', 'The account') } }, 400, 409),
    async (req, reply) => {
      if (req.body.role === 'operator') inPerson(req, 'make an operator account');
      return reply.code(201).send(await accounts.createAccount(req.body));
    });

  api.get<Id>('/accounts/:id', s('accounts', 'One account', { params: idParams, response: { 200: ref('Account', 'The account') } }, 404),
    async (req) => accounts.getAccount(req.params.id));

  api.patch<Id & { Body: AccountChange }>('/accounts/:id', s('accounts', "Change an account's name, email, password, role or plan", { params: idParams, body: accountPatchBody, response: { 200: ref('Account', 'The changed account') } }, 400, 404, 409),
    async (req) => {
      if (req.body.role === 'member') notSelf(req, 'remove the operator role from');
      if (req.body.role === 'operator') inPerson(req, 'make an account an operator');
      const updated = await accounts.updateAccount(req.params.id, req.body);
      // A password set by the operator ends the sessions of the account's own login; its members' stay.
      if (req.body.password !== undefined) await accounts.store.sessions.deleteSessionsOf(req.params.id, null);
      return updated;
    });

  api.post<Id>('/accounts/:id/reset-link', s('accounts', "A single-use password reset link for the account's own login, to hand over (when mail is not configured)", { params: idParams, response: { 201: { description: 'The link', type: 'object', properties: { url: { type: 'string' }, expiresAt: { type: 'string' } } } } }, 404),
    async (req, reply) => reply.code(201).send(await team.operatorResetLink(req.params.id)));

  api.post<Id & { Body: { email: string; role: MemberRole } }>('/accounts/:id/invitations', s('accounts', 'Invite someone to an account (a single-use link, mailed when mail is configured; the same answer whether the email has a login or not)', {
    params: idParams, body: { type: 'object', additionalProperties: false, required: ['email', 'role'], properties: { email: { type: 'string', minLength: 3, maxLength: 320 }, role: { type: 'string', enum: ['owner', 'developer', 'viewer'] } } },
  }, 400, 403, 404), async (req, reply) => {
    // An owner of an operator account is an operator (auth.ts).
    if (req.body.role === 'owner' && (await accounts.getAccount(req.params.id)).role === 'operator') inPerson(req, "invite an owner of an operator's account");
    return reply.code(201).send(await team.invite(req.params.id, req.body.email, req.body.role, 'The operator', true));
  });

  api.post<Id>('/accounts/:id/suspend', s('accounts', "Suspend an account: its keys and logins are refused from the next request", { params: idParams, response: { 200: ref('Account', 'The account') } }, 404, 409),
    async (req) => {
      notSelf(req, 'suspend');
      return accounts.suspendAccount(req.params.id);
    });

  api.post<Id>('/accounts/:id/reactivate', s('accounts', 'Reactivate a suspended account', { params: idParams, response: { 200: ref('Account', 'The account') } }, 404),
    async (req) => accounts.reactivateAccount(req.params.id));

  // Keys of any account ------------------------------------------------------------------------------------
  api.get<Id & { Querystring: { limit?: string; cursor?: string } }>('/accounts/:id/keys', s('keys', "An account's keys, oldest first, a page at a time", { params: idParams, querystring: pageQuery, response: { 200: pageOf('keys', 'Key', 'A page of the keys') } }, 400, 404),
    async (req) => {
      await accounts.getAccount(req.params.id);
      return accounts.listKeysPage(req.params.id, Number(req.query.limit ?? 100), req.query.cursor);
    });

  api.post<Id & { Body: NewKeyInput }>('/accounts/:id/keys', s('keys', 'Create a key for an account; its value is in this response and never again', { params: idParams, body: newKeyBody, response: { 201: ref('CreatedKey', 'The key with its value') } }, 400, 404),
    async (req, reply) => {
      // The operator gives any account's key any permission but `operator`, which only an operator in person gives.
      requireGrant(req, permissionsFor(req.body.type ?? 'Standard', req.body.permissions));
      const { key, value } = await accounts.createKey(req.params.id, req.body);
      return reply.code(201).send({ ...key, value });
    });

  api.post<Id>('/keys/:id/revoke', s('keys', 'Revoke any key: the next request with it is refused', { params: idParams, response: { 200: ref('Key', 'The revoked key') } }, 404),
    async (req) => accounts.revokeKey(req.params.id));
}

/**
 * Making an operator is a person's act: an `operator` key runs the operator's routes, but a leaked one must not mint
 * further operators (new operator accounts, accounts promoted, owners invited to an operator's account).
 */
function inPerson(req: FastifyRequest, what: string): void {
  if (req.principal!.key) throw new ApiError(403, 'forbidden', `a key cannot ${what}; an operator does that in person`);
}

/** An operator cannot lock themselves out through the API (the CLI can still repair anything). */
function notSelf(req: FastifyRequest<Id>, what: string): void {
  if (req.principal!.account.id === req.params.id) throw new ApiError(409, 'conflict', `an operator cannot ${what} their own account`);
}
