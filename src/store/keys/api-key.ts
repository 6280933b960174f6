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
  /** Method names refused for this key, whatever the allowlist says. */
  methodDenylist: string[];
  /**
   * Contract addresses (lowercase) its calls may name: the `to` of a call or transaction, the `address` of a log
   * filter (where each method's params carry them is its spec's `contracts`); empty: any.
   */
  contractAllowlist: string[];
  /** Parts of a User-Agent (any one found in it, case aside, admits the request); empty: any. */
  userAgentAllowlist: string[];
  /** Blocks one eth_getLogs may span for this key, within the network's own bound; null: the network's. */
  logsMaxBlockRange: number | null;
  /** Public keys of the JWTs this key requires (`Authorization: Bearer`); empty: no JWT required. */
  jwtKeys: JwtPublicKey[];
  /** The `aud` a JWT must carry (one of them); empty: not checked. */
  jwtAudiences: string[];
  /**
   * The value before the last rotation, while it still works: its prefix and until when (its hash is kept only
   * until then: `previousHash`). Null: no overlap running.
   */
  previousPrefix: string | null;
  previousUntil: string | null;
  /** SHA-256 of the previous value, during its overlap only; never shown, like `hash`. */
  previousHash: string | null;
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

/** Signature algorithms a key's JWTs may use: RSA, P-256 and Ed25519, each with its one algorithm. */
export const JWT_ALGS = ['RS256', 'ES256', 'EdDSA'] as const;
export type JwtAlg = (typeof JWT_ALGS)[number];
/** Public keys one key may hold: enough to roll a signing key over (old and new side by side), not a key ring. */
export const MAX_JWT_KEYS = 3;
/** The longest a rotated-out value keeps working: long enough to redeploy, short enough that a leak ends. */
export const MAX_OVERLAP_MS = 24 * 3_600_000;

/** A public key the JWTs of a key may be signed with; uploaded as PEM or JWK, kept as a JWK. */
export interface JwtPublicKey {
  /** Its id: a token names it in its header's `kid` (a token without `kid` is tried with each key). */
  id: string;
  alg: JwtAlg;
  /** The public JWK (`kty`, `crv`, `x`, `y`, `n`, `e`): public, so shown in the API. */
  jwk: Record<string, string>;
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
