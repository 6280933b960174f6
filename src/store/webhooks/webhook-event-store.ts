/** One event in a webhook's outbox, with its delivery so far. */
export interface WebhookEvent {
  /** Fixed by what happened (the webhook, the kind, the block…): the same event found by two instances is one. */
  id: string;
  webhookId: string;
  /** Order of the webhook's events: delivered one at a time, in this order. */
  seq: number;
  type: string;
  /** The JSON body POSTed, exactly. */
  body: string;
  createdAt: string;
  status: 'pending' | 'delivered';
  attempts: number;
  nextAttemptAt: string;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  /** When the last attempt began (null: not tried yet). */
  lastAttemptAt: string | null;
  /** How long the last attempt took, ms (null: not tried yet, or tried before this was recorded). */
  lastDurationMs: number | null;
  /** The start of the receiver's answer to the last attempt (first 2 KB, as text; null: no answer). */
  lastResponse: string | null;
}
export type NewWebhookEvent = Pick<WebhookEvent, 'id' | 'webhookId' | 'type' | 'body' | 'createdAt'>;

/** A webhook's outbox in numbers (analytics and /metrics): its events, how many were delivered, are waiting, were tried. */
export interface WebhookStats {
  webhookId: string;
  events: number;
  delivered: number;
  /** The backlog: events not yet acknowledged. */
  pending: number;
  /** Every attempt, the successful ones included. */
  attempts: number;
  failedAttempts: number;
  /** When the oldest waiting event was written (null: none waits). */
  oldestPendingAt: string | null;
  /** Mean time from an event being written to its acknowledgement, of the delivered ones. */
  meanDeliveryMs: number | null;
}

/** What one delivery attempt of a leased event came to. */
export interface WebhookAttempt {
  delivered: boolean;
  status: number | null;
  error: string | null;
  at: string;
  /** When to try again (ignored when delivered). */
  nextAttemptAt: string;
  /** How long the attempt took, ms (shown in the deliveries view). */
  durationMs?: number;
  /** The start of the receiver's answer (first 2 KB, as text), null when there was none. */
  responseBody?: string | null;
}

/** The webhooks' outbox: events in order per webhook, leased to one deliverer at a time. */
export interface WebhookEventStore {
  /**
   * Appends events to their webhooks' outboxes, in the order given (each after its webhook's last). An event whose
   * id is already there is skipped: two instances finding the same event write it once.
   */
  addWebhookEvents(events: readonly NewWebhookEvent[]): Promise<void>;
  /**
   * Leases up to `limit` events due by `now` for `owner` until `leaseUntil`: of each active webhook only its oldest
   * pending event (deliveries stay in order), and none leased by another owner whose lease still runs.
   */
  claimWebhookEvents(owner: string, now: string, leaseUntil: string, limit: number): Promise<WebhookEvent[]>;
  /**
   * Moves the leases `owner` holds on these events to `leaseUntil` (the heartbeat of the attempts in flight:
   * webhooks/lease-heartbeat.ts; a time already past lets them go at once). Events no longer leased to `owner`
   * (recorded meanwhile, or taken by another after the lease ran out) are left alone. Answers how many moved.
   */
  renewWebhookLeases(owner: string, ids: readonly string[], leaseUntil: string): Promise<number>;
  /** Records an attempt at a leased event and ends the lease; nothing if the lease is no longer `owner`'s. */
  recordWebhookAttempt(id: string, owner: string, attempt: WebhookAttempt): Promise<void>;
  /** The outbox of each webhook that has events, in numbers; an account's webhooks only, with `accountId`. */
  webhookStats(accountId?: string): Promise<WebhookStats[]>;
  /** Drops events delivered before `before` (retention; events still waiting are kept); returns how many. */
  pruneWebhookEvents(before: string): Promise<number>;
  /** Drops test events (type `webhook.test`, "Send test") written before `before`, delivered or not; returns how many. */
  pruneWebhookTestEvents(before: string): Promise<number>;
  /** The events of these ids that exist (the outbox remembers what was sent, e.g. to send it again as removed). */
  getWebhookEvents(ids: readonly string[]): Promise<WebhookEvent[]>;
  /** A webhook's events, newest first. */
  listWebhookEvents(webhookId: string, limit: number): Promise<WebhookEvent[]>;
}
