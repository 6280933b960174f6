export type WebhookStatus = 'active' | 'paused' | 'disabled';

/** A webhook (docs/decisions.md §10): chain events of one kind on one network, POSTed to `url`, signed with `secret`. */
export interface Webhook {
  id: string;
  accountId: string;
  network: string;
  kind: string;
  url: string;
  options: Record<string, unknown>;
  /** The HMAC key of the signatures; kept as is (it must sign), shown to the user only when made or rotated. */
  secret: string;
  status: WebhookStatus;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}
export type NewWebhook = Omit<Webhook, 'createdAt' | 'updatedAt' | 'disabledReason'>;
export type WebhookPatch = Partial<Pick<Webhook, 'url' | 'options' | 'secret' | 'status' | 'disabledReason'>>;

/** Webhooks, as their accounts set them up. */
export interface WebhookStore {
  createWebhook(webhook: NewWebhook): Promise<Webhook>;
  getWebhook(id: string): Promise<Webhook | undefined>;
  /** An account's webhooks, oldest first; without `accountId`, everyone's. */
  listWebhooks(accountId?: string): Promise<Webhook[]>;
  updateWebhook(id: string, patch: WebhookPatch): Promise<Webhook | undefined>;
  /** Deletes the webhook and its events. */
  deleteWebhook(id: string): Promise<boolean>;
}
