import { randomUUID } from 'node:crypto';
import { parseAllowlist } from '../auth/ip-allowlist.ts';
import { DEFAULT_MAX_KEYS, type NewPlan, type PlanPatch } from '../store/plans/plan-store.ts';
import { StoreConflictError } from '../store/store-errors.ts';
import type { AccountPatch } from '../store/accounts/account-store.ts';
import type { ApiKeyPatch } from '../store/keys/key-store.ts';
import type { Stores } from '../store/stores.ts';
import { NotFoundError, ValidationError } from './errors.ts';
import { newKeyMaterial } from '../auth/key-value.ts';
import { PLAN_LIMITS, planLimitProblem } from '../config/plan-limits.ts';
import { KEY_TYPES, PERMISSIONS, permissionsFor, type ApiKey, type KeyType, type Permission } from '../store/keys/api-key.ts';
import type { Account, Role } from '../store/accounts/account.ts';
import type { Plan } from '../store/plans/plan.ts';
import { hashPassword } from './password.ts';

export interface NewKeyInput {
  name: string;
  type?: KeyType;
  permissions?: Permission[];
  ipAllowlist?: string[];
  originAllowlist?: string[];
  networkAllowlist?: string[];
  methodAllowlist?: string[];
  expiresAt?: string | null;
}

export interface NewAccountInput {
  name: string;
  email: string;
  password?: string;
  role?: Role;
  planId?: string;
}

export type PlanInput = NewPlan;

/** What names are valid in a key's network and method allowlists. */
export interface Catalogue {
  /** Network names and aliases → the network's name (allowlists keep names: `devnet` is stored as `testnet`). */
  networks: ReadonlyMap<string, string>;
  methods: ReadonlySet<string>;
  defaultPlan: string;
}

/**
 * Accounts, plans and keys: the rules of docs/decisions.md §6, shared by the management API and the CLI. Every
 * change calls `onChange`, which drops the key cache so the very next request sees it (revocation included).
 * `ownerId` scopes key operations to one account: another account's key is NotFound, never visible.
 */
export class AccountsService {
  constructor(readonly store: Stores, private readonly catalogue: Catalogue, private readonly onChange: () => void = () => {}) {}

  // Plans ------------------------------------------------------------------------------------------------------

  listPlans(): Promise<Plan[]> {
    return this.store.plans.listPlans();
  }

  async getPlan(id: string): Promise<Plan> {
    return (await this.store.plans.getPlan(id)) ?? notFound('plan');
  }

  async createPlan(input: PlanInput): Promise<Plan> {
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(input.id ?? '')) throw new ValidationError('id', 'lowercase letters, digits and dashes, at most 63');
    if (!input.name?.trim()) throw new ValidationError('name', 'must not be empty');
    checkPlanNumbers(input);
    return this.changed(await this.store.plans.createPlan(input));
  }

  async updatePlan(id: string, patch: PlanPatch): Promise<Plan> {
    if (patch.name !== undefined && !patch.name.trim()) throw new ValidationError('name', 'must not be empty');
    checkPlanNumbers(patch);
    return this.changed((await this.store.plans.updatePlan(id, patch)) ?? notFound('plan'));
  }

  async deletePlan(id: string): Promise<void> {
    if (!(await this.store.plans.deletePlan(id))) notFound('plan');
    this.onChange();
  }

  // Accounts ---------------------------------------------------------------------------------------------------

  listAccounts(): Promise<Account[]> {
    return this.store.accounts.listAccounts();
  }

  async getAccount(id: string): Promise<Account> {
    return (await this.store.accounts.getAccount(id)) ?? notFound('account');
  }

  async createAccount(input: NewAccountInput): Promise<Account> {
    const email = input.email?.trim();
    if (!email || !EMAIL.test(email)) throw new ValidationError('email', 'must be an email address');
    if (!input.name?.trim()) throw new ValidationError('name', 'must not be empty');
    if (input.role !== undefined && !ROLES.includes(input.role)) throw new ValidationError('role', `one of ${ROLES.join(', ')}`);
    if (input.password !== undefined && input.password.length < 12) throw new ValidationError('password', 'must be at least 12 characters');
    const planId = input.planId ?? this.catalogue.defaultPlan;
    if (!(await this.store.plans.getPlan(planId))) throw new ValidationError('planId', `no plan ${planId}`);
    await this.refuseMemberEmail(email);
    const account = await this.store.accounts.createAccount({
      id: randomUUID(),
      name: input.name.trim(),
      email,
      passwordHash: input.password ? await hashPassword(input.password) : null,
      status: 'active',
      role: input.role ?? 'member',
      planId,
    });
    return this.changed(account);
  }

  async updateAccount(id: string, patch: Omit<AccountPatch, 'passwordHash'> & { password?: string }): Promise<Account> {
    const { password, ...rest } = patch;
    const p: AccountPatch = { ...rest };
    if (rest.name !== undefined && !rest.name.trim()) throw new ValidationError('name', 'must not be empty');
    if (rest.email !== undefined && !EMAIL.test(rest.email.trim())) throw new ValidationError('email', 'must be an email address');
    if (rest.role !== undefined && !ROLES.includes(rest.role)) throw new ValidationError('role', `one of ${ROLES.join(', ')}`);
    if (rest.status !== undefined && !['active', 'suspended'].includes(rest.status)) throw new ValidationError('status', 'one of active, suspended');
    if (rest.planId !== undefined && !(await this.store.plans.getPlan(rest.planId))) throw new ValidationError('planId', `no plan ${rest.planId}`);
    if (rest.email !== undefined) await this.refuseMemberEmail(rest.email.trim());
    if (password !== undefined) {
      if (password.length < 12) throw new ValidationError('password', 'must be at least 12 characters');
      p.passwordHash = await hashPassword(password);
    }
    const updated = (await this.store.accounts.updateAccount(id, p)) ?? notFound('account');
    // Suspension ends the account's dashboard sessions: an old cookie must not work again after
    // reactivation. Deleted in the store, so on every instance at once.
    if (p.status === 'suspended') await this.store.sessions.deleteSessionsOf(id);
    return this.changed(updated);
  }

  suspendAccount(id: string): Promise<Account> {
    return this.updateAccount(id, { status: 'suspended' });
  }

  reactivateAccount(id: string): Promise<Account> {
    return this.updateAccount(id, { status: 'active' });
  }

  // Keys -------------------------------------------------------------------------------------------------------

  async listKeys(accountId: string): Promise<ApiKey[]> {
    return this.store.keys.listKeys(accountId);
  }

  /**
   * A page of the account's keys, oldest first, and the cursor of the next page (null after the last): an account
   * with thousands of revoked keys and long allowlists is never answered in one body.
   */
  async listKeysPage(accountId: string, limit: number, cursor?: string): Promise<{ keys: ApiKey[]; nextCursor: string | null }> {
    let after: { createdAt: string; id: string } | undefined;
    if (cursor) {
      const [createdAt, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
      if (!createdAt || !id || Number.isNaN(Date.parse(createdAt))) throw new ValidationError('cursor', 'not a cursor this API gave');
      after = { createdAt, id };
    }
    const keys = await this.store.keys.listKeys(accountId, { limit: limit + 1, after });
    const more = keys.length > limit;
    if (more) keys.length = limit;
    const last = keys.at(-1);
    return { keys, nextCursor: more && last ? Buffer.from(`${last.createdAt}|${last.id}`).toString('base64url') : null };
  }

  /** The key, if it exists and (with `ownerId`) belongs to that account. */
  async getKey(id: string, ownerId?: string): Promise<ApiKey> {
    const key = await this.store.keys.getKey(id);
    if (!key || (ownerId !== undefined && key.accountId !== ownerId)) notFound('key');
    return key!;
  }

  /**
   * Creates a key; its value is returned this once and never stored. Who may grant which permission is the
   * caller's to check (accounts/key-grants.ts); `createdBy` is the member who makes it, if a member does.
   */
  async createKey(accountId: string, input: NewKeyInput, createdBy: string | null = null): Promise<{ key: ApiKey; value: string }> {
    const account = await this.getAccount(accountId);
    const name = input.name?.trim();
    if (!name) throw new ValidationError('name', 'must not be empty');
    const type = input.type ?? 'Standard';
    if (!KEY_TYPES.includes(type)) throw new ValidationError('type', `one of ${KEY_TYPES.join(', ')}`);
    if (type === 'Restricted') {
      if (!input.permissions?.length) throw new ValidationError('permissions', 'a Restricted key needs a non-empty set of permissions');
      const bad = input.permissions.find((p) => !PERMISSIONS.includes(p));
      if (bad) throw new ValidationError('permissions', `unknown permission ${bad} (one of ${PERMISSIONS.join(', ')})`);
      // The operator's routes reach every account: such a key belongs to an operator, never to a tenant.
      if (input.permissions.includes('operator') && account.role !== 'operator') throw new ValidationError('permissions', 'only a key of an operator account can carry operator');
    } else if (input.permissions !== undefined) {
      throw new ValidationError('permissions', `only Restricted keys choose permissions; a ${type} key has ${permissionsFor(type, undefined).join(', ')}`);
    }
    const lists = this.checkRestrictions(input);
    // Keys are free to make: without a cap, one account could make thousands (each a lookup entry, a row, a list,
    // and a per-second bucket of its own). The plan says how many.
    const max = (await this.store.plans.getPlan(account.planId))?.maxKeys ?? DEFAULT_MAX_KEYS;
    if ((await this.store.keys.countActiveKeys(accountId)) >= max) {
      throw new StoreConflictError(`the account already has ${max} keys that are not revoked (the most its plan allows); revoke one first`);
    }
    const { value, key } = newKeyMaterial(name);
    const created = await this.store.keys.insertKey({
      ...key,
      accountId,
      type,
      permissions: permissionsFor(type, input.permissions),
      ipAllowlist: lists.ipAllowlist ?? [],
      originAllowlist: lists.originAllowlist ?? [],
      networkAllowlist: lists.networkAllowlist ?? [],
      methodAllowlist: lists.methodAllowlist ?? [],
      expiresAt: lists.expiresAt ?? null,
      createdBy,
    });
    return { key: this.changed(created), value };
  }

  /** Name, allowlists and expiry; type and permissions are fixed at creation (make a new key instead). */
  async updateKey(id: string, patch: ApiKeyPatch, ownerId?: string): Promise<ApiKey> {
    await this.getKey(id, ownerId);
    if (patch.name !== undefined && !patch.name.trim()) throw new ValidationError('name', 'must not be empty');
    const checked = { ...patch, ...this.checkRestrictions(patch) };
    return this.changed((await this.store.keys.updateKey(id, checked)) ?? notFound('key'));
  }

  async revokeKey(id: string, ownerId?: string): Promise<ApiKey> {
    await this.getKey(id, ownerId);
    return this.changed((await this.store.keys.revokeKey(id)) ?? notFound('key'));
  }

  /** Revokes the keys a member made (the member is leaving the account): they stop working on the next request. */
  async revokeKeysMadeBy(memberId: string): Promise<number> {
    return this.changed(await this.store.keys.revokeKeysMadeBy(memberId));
  }

  private checkRestrictions(input: ApiKeyPatch): ApiKeyPatch {
    const out: ApiKeyPatch = {};
    if (input.ipAllowlist !== undefined) {
      try { parseAllowlist(input.ipAllowlist); } catch (e) { throw new ValidationError('ipAllowlist', (e as Error).message); }
      out.ipAllowlist = [...input.ipAllowlist];
    }
    if (input.originAllowlist !== undefined) {
      out.originAllowlist = input.originAllowlist.map((o) => {
        let u: URL;
        try { u = new URL(o); } catch { throw new ValidationError('originAllowlist', `not an origin: ${o}`); }
        if (u.origin === 'null' || u.origin !== o.replace(/\/$/, '')) throw new ValidationError('originAllowlist', `not an origin (scheme://host[:port]): ${o}`);
        return u.origin;
      });
    }
    if (input.networkAllowlist !== undefined) {
      const bad = input.networkAllowlist.find((n) => !this.catalogue.networks.has(n));
      if (bad) throw new ValidationError('networkAllowlist', `unknown network ${bad}`);
      out.networkAllowlist = [...new Set(input.networkAllowlist.map((n) => this.catalogue.networks.get(n)!))];
    }
    if (input.methodAllowlist !== undefined) {
      const bad = input.methodAllowlist.find((m) => !this.catalogue.methods.has(m));
      if (bad) throw new ValidationError('methodAllowlist', `not an allowed method: ${bad}`);
      out.methodAllowlist = [...input.methodAllowlist];
    }
    if (input.expiresAt !== undefined && input.expiresAt !== null) {
      const t = Date.parse(input.expiresAt);
      if (Number.isNaN(t)) throw new ValidationError('expiresAt', 'must be an ISO 8601 date-time');
      out.expiresAt = new Date(t).toISOString();
    } else if (input.expiresAt === null) out.expiresAt = null;
    return out;
  }

  /** An email is one login: an account cannot take the email of another account's member. */
  private async refuseMemberEmail(email: string): Promise<void> {
    if (await this.store.members.getMemberByEmail(email)) throw new StoreConflictError(`a login with email ${email} already exists`);
  }

  private changed<T>(x: T): T {
    this.onChange();
    return x;
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const ROLES: readonly Role[] = ['operator', 'member'];

/** The bounds of the limits' one definition (config/plan-limits.ts); the configuration's plans are checked against it too. */
function checkPlanNumbers(p: PlanPatch): void {
  for (const l of PLAN_LIMITS) {
    const problem = p[l.name] === undefined ? undefined : planLimitProblem(l, p[l.name]);
    if (problem) throw new ValidationError(l.name, problem);
  }
}

function notFound(what: string): never {
  throw new NotFoundError(what);
}
