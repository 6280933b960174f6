// Transitional: the one-interface store the SQL of sqlite.ts and postgres.ts implements while the domains move to their own stores.
import type { AlertStore } from './alerts/alert-store.ts';
import type { MailStore } from './mail/mail-store.ts';
import type { MetaStore } from './meta/meta-store.ts';
import type { UsageStore } from './usage/usage-store.ts';
import type { WebhookEventStore } from './webhooks/webhook-event-store.ts';
import type { WebhookStore } from './webhooks/webhook-store.ts';

export type * from './alerts/alert-store.ts';
export type * from './mail/mail-store.ts';
export type * from './usage/usage-store.ts';
export type * from './webhooks/webhook-event-store.ts';
export type * from './webhooks/webhook-store.ts';
export type { NewPlan, PlanPatch } from './plans/plan-store.ts';
export { DEFAULT_MAX_KEYS, DEFAULT_MAX_WEBHOOKS, DEFAULT_SUBSCRIPTIONS_PER_ACCOUNT, DEFAULT_SUBSCRIPTIONS_PER_KEY } from './plans/plan-store.ts';
export { groupKeyId, LATENCY_BUCKETS_MS } from './usage/usage-store.ts';
export { StoreConflictError } from './store-errors.ts';

export interface Store extends UsageStore, AlertStore, MailStore, WebhookStore, WebhookEventStore, MetaStore {
  readonly kind: 'sqlite' | 'postgres';
  ping(): Promise<void>;
  close(): Promise<void>;
}
