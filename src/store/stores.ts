import type { AccountStore } from './accounts/account-store.ts';
import type { AlertStore } from './alerts/alert-store.ts';
import type { KeyStore } from './keys/key-store.ts';
import type { MailStore } from './mail/mail-store.ts';
import type { MetaStore } from './meta/meta-store.ts';
import type { PlanStore } from './plans/plan-store.ts';
import type { RequestStore } from './requests/request-store.ts';
import type { SessionStore } from './sessions/session-store.ts';
import type { MemberStore } from './team/member-store.ts';
import type { TokenStore } from './team/token-store.ts';
import type { UsageStore } from './usage/usage-store.ts';
import type { WebhookEventStore } from './webhooks/webhook-event-store.ts';
import type { WebhookStore } from './webhooks/webhook-store.ts';

/**
 * The store, by domain: SQLite (the embedded default) or PostgreSQL (`DATABASE_URL`), each domain a narrow store of
 * its own with its queries written once (Kysely) and one contract test run on both. A consumer takes the domains it
 * uses (`Pick<Stores, 'keys' | 'accounts'>`, or one domain's store). Getters answer `undefined` for what does not
 * exist; updates answer the new record or `undefined` when there was none to update.
 */
export interface Stores {
  readonly kind: 'sqlite' | 'postgres';
  readonly plans: PlanStore;
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly usage: UsageStore;
  readonly requests: RequestStore;
  readonly alerts: AlertStore;
  readonly sessions: SessionStore;
  readonly members: MemberStore;
  readonly tokens: TokenStore;
  readonly mail: MailStore;
  readonly webhooks: WebhookStore;
  readonly webhookEvents: WebhookEventStore;
  readonly meta: MetaStore;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
