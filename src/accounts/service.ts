import { randomUUID } from 'node:crypto';
import { DEFAULT_MAX_KEYS, type NewPlan, type PlanPatch } from '../store/plans/plan-store.ts';
import { StoreConflictError } from '../store/store-errors.ts';
import type { AccountPatch } from '../store/accounts/account-store.ts';
import type { Stores } from '../store/stores.ts';
import { NotFoundError, ValidationError } from './errors.ts';
import { hashKey, isKeyValue, newKeyMaterial, PREFIX_LENGTH } from '../auth/key-value.ts';
import { checkKeyRules, type KeyRulesInput, type RuleNames } from './key-rules.ts';
import { PLAN_LIMITS, planLimitProblem } from '../config/plan-limits.ts';
import { KEY_TYPES, MAX_OVERLAP_MS, PERMISSIONS, permissionsFor, type ApiKey, type KeyType, type Permission } from '../store/keys/api-key.ts';
import type { Account, Role } from '../store/accounts/account.ts';
import type { Plan } from '../store/plans/plan.ts';
import { hashPassword } from './password.ts';
import { findKeyByHash } from '../store/keys/key-store.ts';

export interface NewKeyInput extends KeyRulesInput {
  name: string;
  type?: KeyType;
  permissions?: Permission[];
}

/** A key's name and rules, as changed; type and permissions are fixed at creation. */
export type KeyPatchInput = KeyRulesInput & { name?: string };

/**
 * What revoking by a reference did: the key revoked (an id, its value or prefix); only a previous value's overlap
 * ended (that value or its prefix: the key and its current value keep working); or nothing, the prefix being
 * several keys' (listed, so that the caller picks one).
 */
export type RevokeOutcome = { revoked: ApiKey; before: ApiKey } | { overlapEnded: ApiKey } | { ambiguous: ApiKey[] };

export interface NewAccountInput {
  name: string;
  email: string;
  password?: string;
  role?: Role;
  planId?: string;
}

export type PlanInput = NewPlan;

/** What names are valid in a key's network and method lists, and the plan of new accounts. */
export interface Catalogue extends RuleNames {
  defaultPlan: string;
}

/**
 * Accounts, plans and keys: the rules of docs/decisions.md §6, shared by the management API and the CLI. Every
 * change calls `onChange`, which drops the key cache so the very next request sees it (revocation included).
 * `ownerId` scopes key operations to one account: another account's key is NotFound, never visible.
 */
export class AccountsService {
  constructor(
    readonly store: Stores,
    private readonly catalogue: Catalogue,
    private readonly onChange: () => void = () => {},
    /** The clock a rotation's overlap is counted from (a test's own). */
    private readonly now: () => number = Date.now,
  ) {}

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

  /** The plan of an account made without a choice (accounts.defaultPlan). */
  get defaultPlan(): string {
    return this.catalogue.defaultPlan;
  }

  async createAccount(input: NewAccountInput): Promise<Account> {
    const email = input.email?.trim();
    if (!email || !EMAIL.test(email)) throw new ValidationError('email', 'must be an email address');
    if (!input.name?.trim()) throw new ValidationError('name', 'must not be empty');
    if (input.role !== undefined && !ROLES.includes(input.role)) throw new ValidationError('role', `one of ${ROLES.join(', ')}`);
    if (input.password !== undefined && input.password.length < 12) throw new ValidationError('password', 'must be at least 12 characters');
    const planId = input.planId ?? this.defaultPlan;
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
    const rules = checkKeyRules(input, this.catalogue);
    // A new key that would never work is a mistake (a date picked in the past), never what was meant. A key's
    // expiry may still be moved to now or before on a change: that is how a key is made to stop at once.
    if (rules.expiresAt && Date.parse(rules.expiresAt) <= Date.now()) throw new ValidationError('expiresAt', 'is in the past: choose a later date, or none for a key that does not expire');
    // Keys are free to make: without a cap, one account could make thousands (each a lookup entry, a row, a list,
    // and a per-second bucket of its own). The plan says how many.
    const max = (await this.store.plans.getPlan(account.planId))?.maxKeys ?? DEFAULT_MAX_KEYS;
    if ((await this.store.keys.countActiveKeys(accountId)) >= max) {
      throw new StoreConflictError(`the account already has ${max} keys that are not revoked (the most its plan allows); revoke one first`);
    }
    const { value, key } = newKeyMaterial(name);
    const created = await this.store.keys.insertKey({ ...rules, ...key, accountId, type, permissions: permissionsFor(type, input.permissions), createdBy });
    return { key: this.changed(created), value };
  }

  /** Name, rules and expiry; type and permissions are fixed at creation (make a new key instead). */
  async updateKey(id: string, patch: KeyPatchInput, ownerId?: string): Promise<ApiKey> {
    await this.getKey(id, ownerId);
    if (patch.name !== undefined && !patch.name.trim()) throw new ValidationError('name', 'must not be empty');
    const checked = { ...checkKeyRules(patch, this.catalogue), ...(patch.name !== undefined ? { name: patch.name.trim() } : {}) };
    return this.changed((await this.store.keys.updateKey(id, checked)) ?? notFound('key'));
  }

  /**
   * A new value for the key, returned this once; the old value keeps working for `overlapMs` (at most a day; 0: it
   * stops now), then only the new one does. Its hash is kept only for the overlap. A second rotation during an
   * overlap ends the oldest value at once.
   */
  async rotateKey(id: string, overlapMs: number, ownerId?: string): Promise<{ key: ApiKey; value: string }> {
    const before = await this.getKey(id, ownerId);
    if (!Number.isSafeInteger(overlapMs) || overlapMs < 0 || overlapMs > MAX_OVERLAP_MS) throw new ValidationError('overlap', 'from 0 to 24 hours');
    if (before.revokedAt) throw new StoreConflictError('the key is revoked: make a new one');
    const { value, key } = newKeyMaterial(before.name);
    const previousUntil = overlapMs > 0 ? new Date(this.now() + overlapMs).toISOString() : null;
    const rotated = await this.store.keys.rotateKey(id, { prefix: key.prefix, hash: key.hash, previousUntil });
    if (!rotated) throw new StoreConflictError('the key is revoked: make a new one');
    return { key: this.changed(rotated), value };
  }

  async revokeKey(id: string, ownerId?: string): Promise<ApiKey> {
    await this.getKey(id, ownerId);
    return this.changed((await this.store.keys.revokeKey(id)) ?? notFound('key'));
  }

  /**
   * Revokes the key a reference names: its id, its value (as a client holds it) or the prefix the lists show
   * (`ngk_Ab12` or `ngk_Ab12…`). A previous value still in its overlap, or its prefix, ends that overlap only. A
   * prefix of several keys revokes nothing and answers them. With `ownerId`, only that account's keys are looked at.
   */
  async revokeByReference(ref: string, ownerId?: string): Promise<RevokeOutcome> {
    const r = ref.trim().replace(/(…|\.\.\.)$/, '');
    let key: ApiKey | undefined;
    let current = true;
    if (UUID.test(r)) key = await this.getKey(r, ownerId);
    else if (isKeyValue(r)) {
      const hash = hashKey(r);
      key = (await findKeyByHash(this.store.keys, hash, new Date(this.now()).toISOString()))?.key;
      current = key?.hash === hash;
    } else {
      if (!PREFIX.test(r)) throw new ValidationError('key', 'a key id, a key value (ngk_…) or the prefix shown for it (at least ngk_ and two characters)');
      // Lists show the first PREFIX_LENGTH characters: a longer piece of a value is looked up by those.
      const shown = r.slice(0, PREFIX_LENGTH);
      const found = await this.store.keys.findKeysByPrefix(shown, ownerId, 20);
      if (found.length > 1) return { ambiguous: found };
      key = found[0];
      current = key?.prefix.startsWith(shown) ?? true;
    }
    if (!key || (ownerId !== undefined && key.accountId !== ownerId)) notFound('key');
    if (!current) {
      await this.store.keys.forgetPreviousValues({ id: key!.id });
      return { overlapEnded: this.changed((await this.store.keys.getKey(key!.id)) ?? notFound('key')) };
    }
    return { revoked: this.changed((await this.store.keys.revokeKey(key!.id)) ?? notFound('key')), before: key! };
  }

  /** Revokes the keys a member made (the member is leaving the account): they stop working on the next request. */
  async revokeKeysMadeBy(memberId: string): Promise<number> {
    return this.changed(await this.store.keys.revokeKeysMadeBy(memberId));
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
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A prefix as shown (`ngk_` and at least two of its characters): fewer would name keys by the dozen. */
const PREFIX = /^ngk_[0-9A-Za-z]{2,40}$/;
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
