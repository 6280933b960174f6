/**
 * The key model of docs/decisions.md §6 and §7: accounts have a plan and keys; keys have a type, permissions and
 * restrictions. Pure types and rules here; storage in store/, management in accounts/service.ts.
 */
import type { PlanLimits } from '../config/plan-limits.ts';

/**
 * What a key may be used for. `admin`: the account's management routes, as its owner. `operator`: the operator's
 * routes; only on a key of an operator account, and only given by an operator in person (accounts/key-grants.ts).
 */
export const PERMISSIONS = ['rpc', 'webhooks', 'analytics', 'admin', 'operator'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const KEY_TYPES = ['Standard', 'Dedicated', 'Restricted'] as const;
export type KeyType = (typeof KEY_TYPES)[number];

/** Standard and Dedicated keys carry these; `admin` is only ever given explicitly, to a Restricted key. */
export const DEFAULT_PERMISSIONS: readonly Permission[] = ['rpc', 'webhooks', 'analytics'];

export type AccountStatus = 'active' | 'suspended';
export type Role = 'operator' | 'member';

/**
 * What a login may do within its account: the account's own login is its `owner`; members are given one
 * of these. The rules are in accounts/roles.ts, in one place.
 */
export const MEMBER_ROLES = ['owner', 'developer', 'viewer'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/** A further login of an account (a team member): its own email and password, and a role. */
export interface Member {
  id: string;
  accountId: string;
  email: string;
  name: string;
  passwordHash: string | null;
  role: MemberRole;
  createdAt: string;
  updatedAt: string;
}

/** A plan: its limits are defined once, with their bounds and defaults, in config/plan-limits.ts. */
export interface Plan extends PlanLimits {
  /** Slug, e.g. `free`; also the plan's name in configuration. */
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

export interface Account {
  id: string;
  name: string;
  email: string;
  /** scrypt hash (`scrypt$N$r$p$salt$hash`), or null for an account that cannot log in. */
  passwordHash: string | null;
  status: AccountStatus;
  role: Role;
  planId: string;
  createdAt: string;
  updatedAt: string;
}

export interface ApiKey {
  id: string;
  accountId: string;
  name: string;
  type: KeyType;
  permissions: Permission[];
  /** First characters of the value, to recognise a key in lists; never enough to use it. */
  prefix: string;
  /** SHA-256 of the value, hex: the only form in which a key is kept. */
  hash: string;
  /** IPv4/IPv6 addresses and CIDRs; empty: any. */
  ipAllowlist: string[];
  /** Browser origins (`https://app.example`); empty: any. */
  originAllowlist: string[];
  /** Network names; empty: any. */
  networkAllowlist: string[];
  /** Method names; empty: any allowed method. */
  methodAllowlist: string[];
  expiresAt: string | null;
  /**
   * The member who made the key (directly, or with a key that member made), or null when the account's own login,
   * the operator or the CLI made it. A member's keys are revoked when the member is removed.
   */
  createdBy: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** What the hot path needs to authorize a request: the key with its account and plan, resolved in one read. */
export interface KeyContext {
  key: ApiKey;
  account: Account;
  plan: Plan;
}

/** The permissions a key of `type` carries; for Restricted, the chosen non-empty subset (validated by the service). */
export function permissionsFor(type: KeyType, chosen: readonly Permission[] | undefined): Permission[] {
  if (type !== 'Restricted') return [...DEFAULT_PERMISSIONS];
  return PERMISSIONS.filter((p) => chosen?.includes(p));
}
