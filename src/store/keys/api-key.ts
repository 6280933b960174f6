/**
 * The key model of docs/decisions.md §6 and §7: keys have a type, permissions and restrictions. Pure types and rules
 * here; storage in key-store.ts, management in accounts/service.ts.
 */
import type { Account } from '../accounts/account.ts';
import type { Plan } from '../plans/plan.ts';

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
