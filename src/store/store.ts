// Transitional: the one-interface store the SQL of sqlite.ts and postgres.ts implements while the domains move to their own stores.
import type { AccountStore } from './accounts/account-store.ts';
import type { KeyStore } from './keys/key-store.ts';
import type { SessionStore } from './sessions/session-store.ts';
import type { MemberStore } from './team/member-store.ts';
import type { TokenStore } from './team/token-store.ts';

export type * from './accounts/account-store.ts';
export type * from './alerts/alert-store.ts';
export type * from './keys/key-store.ts';
export type * from './sessions/session-store.ts';
export type * from './team/member-store.ts';
export type * from './team/token-store.ts';
export type * from './usage/usage-store.ts';
export type { NewPlan, PlanPatch } from './plans/plan-store.ts';
export { DEFAULT_MAX_KEYS, DEFAULT_MAX_WEBHOOKS, DEFAULT_SUBSCRIPTIONS_PER_ACCOUNT, DEFAULT_SUBSCRIPTIONS_PER_KEY } from './plans/plan-store.ts';
export { groupKeyId, LATENCY_BUCKETS_MS } from './usage/usage-store.ts';
export { StoreConflictError } from './store-errors.ts';

export interface Store extends AccountStore, KeyStore, SessionStore, MemberStore, TokenStore {
  readonly kind: 'sqlite' | 'postgres';
  close(): Promise<void>;
}
