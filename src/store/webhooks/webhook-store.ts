import type { Codec } from '../sql/codec.ts';
import { given } from '../sql/patch.ts';
import { SqlDb } from '../sql/sql-db.ts';
import type { WebhooksTable } from '../sql/tables.ts';

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

/** What an update may set, with its column. */
const WEBHOOK_FIELDS = { url: 'url', options: 'options', secret: 'secret', status: 'status', disabledReason: 'disabled_reason' } as const;

/** A webhook from its row; `options` is JSON text on both databases. */
function webhookFromRow(r: WebhooksTable, c: Codec): Webhook {
  return {
    id: r.id, accountId: r.account_id, network: r.network, kind: r.kind, url: r.url,
    options: JSON.parse(r.options) as Record<string, unknown>, secret: r.secret, status: r.status as WebhookStatus,
    disabledReason: r.disabled_reason ?? null, createdAt: c.time(r.created_at), updatedAt: c.time(r.updated_at),
  };
}

/** The webhook store on a database. */
export function webhookStore(db: SqlDb): WebhookStore {
  const { k, codec } = db;
  return {
    async createWebhook(w) {
      const now = new Date().toISOString();
      const row = await k.insertInto('webhooks').values({
        id: w.id, account_id: w.accountId, network: w.network, kind: w.kind, url: w.url, options: JSON.stringify(w.options),
        secret: w.secret, status: w.status, disabled_reason: null, created_at: now, updated_at: now,
      }).returningAll().executeTakeFirstOrThrow();
      return webhookFromRow(row, codec);
    },
    async getWebhook(id) {
      const row = await k.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
      return row && webhookFromRow(row, codec);
    },
    async listWebhooks(accountId) {
      let q = k.selectFrom('webhooks').selectAll();
      if (accountId !== undefined) q = q.where('account_id', '=', accountId);
      return (await q.orderBy('created_at').orderBy('id').execute()).map((r) => webhookFromRow(r, codec));
    },
    // One statement setting only the fields given: no read-merge-write for a concurrent update to lose.
    async updateWebhook(id, patch) {
      const set: Partial<WebhooksTable> = { updated_at: new Date().toISOString() };
      for (const [field, value] of Object.entries(given(patch, Object.keys(WEBHOOK_FIELDS)))) {
        const column = WEBHOOK_FIELDS[field as keyof typeof WEBHOOK_FIELDS];
        (set as Record<string, unknown>)[column] = field === 'options' ? JSON.stringify(value) : value;
      }
      const row = await k.updateTable('webhooks').set(set).where('id', '=', id).returningAll().executeTakeFirst();
      return row && webhookFromRow(row, codec);
    },
    // Its events and counters go with it (ON DELETE CASCADE).
    async deleteWebhook(id) {
      return SqlDb.changed(await k.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst()) > 0;
    },
  };
}
