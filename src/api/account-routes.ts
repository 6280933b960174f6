import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AccountsService, KeyPatchInput, NewKeyInput } from '../accounts/service.ts';
import { errorResponses, idParams, keyPatchBody, newKeyBody, pageOf, pageQuery, ref, revokeByReferenceBody, rotateBody } from './schemas.ts';
import { revokedByReference } from './revoke-by-reference.ts';
import { makerOf, requireGrant, requireRole } from './auth.ts';
import { permissionsFor } from '../store/keys/api-key.ts';

const security: Record<string, string[]>[] = [{ apiKey: [] }];
const tags = ['account'];
type Id = { Params: { id: string } };

/**
 * The account's own routes (Bearer key with `admin`): the account and its plan, and its keys. Every key
 * operation is scoped to the caller's account: another account's key is 404, exactly like a missing one.
 */
export async function accountRoutes(api: FastifyInstance, opts: { accounts: AccountsService; authenticate: onRequestAsyncHookHandler; flushLastUsed?: () => Promise<void> }) {
  const lastUsedWritten = () => opts.flushLastUsed?.().catch(() => undefined);
  const { accounts } = opts;
  api.addHook('onRequest', opts.authenticate);
  // Set by the onRequest hook above for every route here.
  const me = (req: FastifyRequest) => req.principal!.account.id;

  api.get('/account', {
    schema: { summary: 'The calling account and its plan', tags, security, response: { 200: ref('AccountWithPlan', 'The account'), ...errorResponses(401, 403) } },
  }, async (req) => {
    const account = await accounts.getAccount(me(req));
    return { ...account, plan: await accounts.getPlan(account.planId) };
  });

  api.get<{ Querystring: { limit?: string; cursor?: string } }>('/keys', {
    schema: {
      summary: "The account's keys, oldest first, a page at a time (values are never shown again, only `prefix`)", tags, security, querystring: pageQuery,
      response: { 200: pageOf('keys', 'Key', 'A page of the keys, revoked ones included'), ...errorResponses(400, 401, 403) },
    },
  }, async (req) => {
    // "Last used" as this instance knows it: its successful calls are written before the keys are read. A store that
    // takes no writes (full, read-only) still answers reads: the times wait for the periodic flush.
    await lastUsedWritten();
    return accounts.listKeysPage(me(req), Number(req.query.limit ?? 100), req.query.cursor);
  });

  api.post<{ Body: NewKeyInput }>('/keys', {
    schema: {
      summary: 'Create a key; its value is in this response and never again', tags, security, body: newKeyBody,
      response: { 201: ref('CreatedKey', 'The key with its value'), ...errorResponses(400, 401, 403) },
    },
  }, async (req, reply) => {
    requireRole(req, 'changeKeys');
    requireGrant(req, permissionsFor(req.body.type ?? 'Standard', req.body.permissions));
    const { key, value } = await accounts.createKey(me(req), req.body, makerOf(req));
    return reply.code(201).send({ ...key, value });
  });

  api.get<Id>('/keys/:id', {
    schema: { summary: 'One key', tags, security, params: idParams, response: { 200: ref('Key', 'The key'), ...errorResponses(401, 403, 404) } },
  }, async (req) => {
    await lastUsedWritten();
    return accounts.getKey(req.params.id, me(req));
  });

  api.patch<Id & { Body: KeyPatchInput }>('/keys/:id', {
    schema: {
      summary: "Change a key's name, allowlists, denylist, eth_getLogs range, JWT public keys or expiry", tags, security, params: idParams, body: keyPatchBody,
      response: { 200: ref('Key', 'The changed key'), ...errorResponses(400, 401, 403, 404) },
    },
  }, async (req) => {
    requireRole(req, 'changeKeys');
    // A key is changed only by someone who could have made it: a developer does not loosen an admin key's allowlists.
    requireGrant(req, (await accounts.getKey(req.params.id, me(req))).permissions);
    return accounts.updateKey(req.params.id, req.body, me(req));
  });

  api.post<Id & { Body: { overlapSeconds?: number } }>('/keys/:id/rotate', {
    schema: {
      summary: 'A new value for the key, in this response and never again; the old one keeps working for overlapSeconds (at most a day), then stops',
      tags, security, params: idParams, body: rotateBody,
      response: { 200: ref('CreatedKey', 'The key with its new value'), ...errorResponses(400, 401, 403, 404, 409) },
    },
  }, async (req) => {
    requireRole(req, 'changeKeys');
    requireGrant(req, (await accounts.getKey(req.params.id, me(req))).permissions);
    const { key, value } = await accounts.rotateKey(req.params.id, (req.body?.overlapSeconds ?? 0) * 1000, me(req));
    return { ...key, value };
  });

  api.post<{ Body: { key: string } }>('/keys/revoke', {
    schema: {
      summary: "Revoke the key named by its id, its value or the prefix shown for it; a rotated-out value's overlap ends (409 when a prefix names several keys)",
      tags, security, body: revokeByReferenceBody,
      response: { 200: ref('RevokedKey', 'What was done'), ...errorResponses(400, 401, 403, 404, 409) },
    },
  }, async (req) => {
    requireRole(req, 'changeKeys');
    return revokedByReference(await accounts.revokeByReference(req.body.key, me(req)));
  });

  api.post<Id>('/keys/:id/revoke', {
    schema: {
      summary: 'Revoke a key: the next request with it is refused (idempotent; the record stays, with revokedAt)', tags, security, params: idParams,
      response: { 200: ref('Key', 'The revoked key'), ...errorResponses(401, 403, 404) },
    },
  }, async (req) => {
    requireRole(req, 'changeKeys');
    return accounts.revokeKey(req.params.id, me(req));
  });
}
