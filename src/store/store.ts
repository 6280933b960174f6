import type { Account, ApiKey, KeyContext, Member, MemberRole, Plan } from './model.ts';
import { PLAN_LIMIT_DEFAULTS } from '../config/plan-limits.ts';

/** Keys per account of a plan made without saying (and of plans made before the limit existed). */
export const DEFAULT_MAX_KEYS = PLAN_LIMIT_DEFAULTS.maxKeys as number;
/** Webhooks per account of a plan made without saying (and of plans made before the limit existed). */
export const DEFAULT_MAX_WEBHOOKS = PLAN_LIMIT_DEFAULTS.maxWebhooks as number;
/** WebSocket subscriptions per key and per account of a plan made without saying (and of plans made before). */
export const DEFAULT_SUBSCRIPTIONS_PER_KEY = PLAN_LIMIT_DEFAULTS.subscriptionsPerKey as number;
export const DEFAULT_SUBSCRIPTIONS_PER_ACCOUNT = PLAN_LIMIT_DEFAULTS.subscriptionsPerAccount as number;

/** Fields a caller sets when creating; ids and timestamps are the store's unless given. */
/**
 * `maxKeys` (100), `maxWebhooks` (20), `subscriptionsPerKey` (100) and `subscriptionsPerAccount` (500) may be left
 * out: plans made before they existed, and callers that do not care.
 */
export type NewPlan = Omit<Plan, 'createdAt' | 'updatedAt' | LaterLimit> & Partial<Pick<Plan, LaterLimit>>;
type LaterLimit = 'maxKeys' | 'maxWebhooks' | 'subscriptionsPerKey' | 'subscriptionsPerAccount';
export type PlanPatch = Partial<Omit<Plan, 'id' | 'createdAt' | 'updatedAt'>>;
export type NewAccount = Omit<Account, 'createdAt' | 'updatedAt'>;
export type AccountPatch = Partial<Pick<Account, 'name' | 'email' | 'passwordHash' | 'status' | 'role' | 'planId'>>;
export type NewApiKey = Omit<ApiKey, 'createdAt' | 'lastUsedAt' | 'revokedAt' | 'createdBy'> & { createdBy?: string | null };
export type ApiKeyPatch = Partial<Pick<ApiKey, 'name' | 'ipAllowlist' | 'originAllowlist' | 'networkAllowlist' | 'methodAllowlist' | 'expiresAt'>>;

/** Latency buckets of usage rows, ms: a call counts in the first bucket its time fits; the last is "above". */
export const LATENCY_BUCKETS_MS = [5, 25, 100, 500, 2500] as const;

/** One minute of one key's calls of one method on one network with one outcome (docs/decisions.md §10: usage analytics). */
export interface UsageMinute {
  /** UTC minute, `YYYY-MM-DDTHH:MM`. */
  minute: string;
  accountId: string;
  keyId: string;
  network: string;
  method: string;
  /** 0: answered with a result; else the JSON-RPC error code of the answer. */
  code: number;
  requests: number;
  computeUnits: number;
  latencyMsSum: number;
  /** Calls per bucket of LATENCY_BUCKETS_MS, and one more for the slower ones. */
  latency: number[];
}

/** Usage rows of minutes in [from, to), optionally of one account, key or network. */
export interface UsageQuery {
  from: string;
  to: string;
  accountId?: string;
  keyId?: string;
  network?: string;
  /** Issue 22: one method (as recorded: `(invalid)`, `(refused)`, `(other)` included). */
  method?: string;
  /** Issue 22: answered with a result (`ok`, code 0), with any error (`error`), or with this code. */
  status?: UsageStatus;
  /** A page (analytics read in bounded pages): at most `limit` rows, in row order, after the row `after`. */
  limit?: number;
  after?: UsageCursor;
}

/** An outcome filter of usage: results, errors, or one code (JSON-RPC error codes are what rows keep). */
export type UsageStatus = 'ok' | 'error' | number;

/** Requests, errors and units of a range of usage rows, added up (the alert checker's error rate). */
export interface UsageSums { requests: number; errors: number; computeUnits: number }

/** An account's alert settings: quota thresholds in percent of the plan's month, and an error-rate alert. */
export interface AlertSettings {
  quotaPercents: number[];
  /** Alert when errors are at least `percent` % of at least `minRequests` calls over the last `minutes`; null: off. */
  errorRate: { percent: number; minutes: number; minRequests: number } | null;
  /** Mail the account's address (and its owners and developers) besides the webhooks. */
  email: boolean;
}

export type AlertKind = 'quota' | 'errorRate';

/**
 * One alert that fired: unique by account, kind, threshold and period, so an instance that writes it
 * first is the only one to send it. Period: the month (`YYYY-MM`) of a quota alert; for an error-rate alert,
 * `open` while the rate stays above (re-armed by closing it: its period becomes the time it fired).
 */
export interface FiredAlert {
  accountId: string;
  kind: AlertKind;
  threshold: number;
  period: string;
  firedAt: string;
  /** The measured value when it fired (percent of the quota, or error rate in percent). */
  value: number;
}

/** Where a page of usage rows ended: the last row's identity (rows are ordered by these). */
export type UsageCursor = Pick<UsageMinute, 'minute' | 'keyId' | 'network' | 'method' | 'code'>;

/**
 * Usage kept under no real key: of keys pruned after their revocation (`(revoked)`), and of calls past
 * the recorder's cells per account and minute (`(other)`). The account is part of the id because rows are keyed by
 * key id (two accounts' `(revoked)` rows must not add up); reports show the part before the colon.
 */
export const groupKeyId = (group: '(revoked)' | '(other)', accountId: string) => `${group}:${accountId}`;

/** A dashboard login (its id is only ever stored hashed). */
export interface Session {
  idHash: string;
  accountId: string;
  /** The member logged in; null or absent: the account's own login. */
  memberId?: string | null;
  /** The token every change made with this session must carry (X-CSRF-Token). */
  csrf: string;
  createdAt: string;
  expiresAt: string;
}

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

export type NewMember = Omit<Member, 'createdAt' | 'updatedAt'>;
export type MemberPatch = Partial<Pick<Member, 'name' | 'role' | 'passwordHash'>>;

/**
 * A single-use token: an invitation to join an account, or a password reset. Only its SHA-256 is kept;
 * `id` is a separate public handle (to list and withdraw invitations) that opens nothing.
 */
export interface AccountToken {
  idHash: string;
  id: string;
  kind: 'invite' | 'reset';
  accountId: string;
  /** A reset of a member's password; null: of the account's own login (or an invitation). */
  memberId: string | null;
  email: string;
  /** The role an invitation gives. */
  role: MemberRole | null;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
}

/** One message of the mail outbox. `body` is emptied once sent (it carries single-use links). */
export interface OutboxMail {
  id: string;
  to: string;
  subject: string;
  body: string;
  createdAt: string;
  nextAttemptAt: string;
  attempts: number;
  sentAt: string | null;
  lastError: string | null;
}
export type NewOutboxMail = Pick<OutboxMail, 'id' | 'to' | 'subject' | 'body' | 'createdAt'>;

/** What one attempt at a leased message came to: sent; or failed, to be tried at `nextAttemptAt`; or given up. */
export interface MailAttempt {
  sent: boolean;
  error: string | null;
  at: string;
  nextAttemptAt: string;
  /** No more attempts: the body is emptied and the message stays unsent, with its last error. */
  giveUp?: boolean;
}

/** A uniqueness or reference rule refused a write (duplicate email, plan in use, unknown plan...). */
export class StoreConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreConflictError';
  }
}

/**
 * The store: SQLite (embedded default, `store/sqlite.ts`) or PostgreSQL (`DATABASE_URL`, `store/postgres.ts`),
 * one interface, one contract test (`store/store.contract.ts`) run against both. All methods are async so both
 * variants fit; getters answer `undefined` for what does not exist; updates answer the new record or
 * `undefined` when there was none to update.
 */
/** A page of keys: at most `limit`, after the key with this creation time and id. */
export interface KeyPage {
  limit: number;
  after?: { createdAt: string; id: string };
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';

  listPlans(): Promise<Plan[]>;
  getPlan(id: string): Promise<Plan | undefined>;
  createPlan(plan: NewPlan): Promise<Plan>;
  updatePlan(id: string, patch: PlanPatch): Promise<Plan | undefined>;
  /** Refuses (StoreConflictError) while an account is on the plan. */
  deletePlan(id: string): Promise<boolean>;

  listAccounts(): Promise<Account[]>;
  getAccount(id: string): Promise<Account | undefined>;
  /** Emails are compared case-insensitively. */
  getAccountByEmail(email: string): Promise<Account | undefined>;
  createAccount(account: NewAccount): Promise<Account>;
  updateAccount(id: string, patch: AccountPatch): Promise<Account | undefined>;

  insertKey(key: NewApiKey): Promise<ApiKey>;
  getKey(id: string): Promise<ApiKey | undefined>;
  /**
   * The account's keys, oldest first; with `page`, at most `limit` of them after the key `after` (a keyset page:
   * stable while keys are added).
   */
  listKeys(accountId: string, page?: KeyPage): Promise<ApiKey[]>;
  /** How many of the account's keys are not revoked. */
  countActiveKeys(accountId: string): Promise<number>;
  /** The key with this SHA-256, with its account and plan, in one read (the hot path's only store access). */
  findKeyByHash(hash: string): Promise<KeyContext | undefined>;
  updateKey(id: string, patch: ApiKeyPatch): Promise<ApiKey | undefined>;
  /** Marks a key revoked (idempotent: a second revocation keeps the first time). */
  revokeKey(id: string): Promise<ApiKey | undefined>;
  /** Records last use of keys, in one batch (flushed periodically, never per request). */
  touchKeys(lastUsed: ReadonlyMap<string, string>): Promise<void>;

  /**
   * Adds compute units to accounts' usage of `month` (`YYYY-MM`, UTC), in one batch (docs/decisions.md §7: flushed
   * periodically, never per request). Concurrent adds from several instances all count. With `batchId`, the batch
   * counts once however often it is sent: a write that failed for its sender (a time-out) may still have been
   * applied, and is sent again with the same id (limits/quota.ts); ids are kept a day.
   */
  addUsage(month: string, byAccount: ReadonlyMap<string, number>, batchId?: string): Promise<void>;
  /** Compute units an account has used in `month` (0 when none). */
  getUsage(accountId: string, month: string): Promise<number>;

  /**
   * Adds calls to usage minutes, in one batch (flushed off the hot path, never per request); concurrent adds from
   * several instances all count. With `batchId`, the batch counts once however often it is sent (see addUsage).
   */
  addUsageMinutes(rows: readonly UsageMinute[], batchId?: string): Promise<void>;
  listUsageMinutes(query: UsageQuery): Promise<UsageMinute[]>;
  /**
   * How many rows `listUsageMinutes(query)` would answer, counting no further than `cap`: min(count, cap). By the
   * same index as the read, and stopping at `cap`, so a range too large to read costs one bounded count.
   */
  countUsageMinutes(query: Omit<UsageQuery, 'limit' | 'after'>, cap: number): Promise<number>;
  /** Drops usage minutes before `minute` (retention). */
  pruneUsageMinutes(before: string): Promise<void>;
  // Issue 22: usage filters, alerts
  /** Requests, errors (rows with a non-zero code) and units of the rows `query` selects, added up. */
  sumUsageMinutes(query: Omit<UsageQuery, 'limit' | 'after'>): Promise<UsageSums>;
  getAlertSettings(accountId: string): Promise<AlertSettings | undefined>;
  putAlertSettings(accountId: string, settings: AlertSettings, updatedAt: string): Promise<void>;
  /** Every account that has alert settings, with them (the checker's round). */
  listAlertSettings(): Promise<Array<{ accountId: string; settings: AlertSettings }>>;
  /**
   * Writes the row if none with its account, kind, threshold and period exists; answers whether this call wrote it
   * (insert-if-absent: of several instances finding the same crossing, exactly one gets true).
   */
  claimAlert(alert: FiredAlert): Promise<boolean>;
  /** Re-arms an error-rate alert: its `open` row gets its firing time as period (kept as history). Answers whether one was open. */
  closeAlert(accountId: string, kind: AlertKind, threshold: number): Promise<boolean>;
  /** The account's fired alerts, newest first. */
  listFiredAlerts(accountId: string, limit: number): Promise<FiredAlert[]>;
  /**
   * Rolls up one hour: the first hour at or after `from` and before `before` that has usage rows; its
   * rows are folded into one row per cell at the hour's first minute (`HH:00`). Answers that hour and how many rows
   * went, or undefined when no such hour has rows. Adds stay exact: a late flush into a rolled hour is a minute row again.
   */
  rollupUsageHour(from: string, before: string): Promise<{ hour: string; removed: number } | undefined>;
  /**
   * Up to `limit` keys revoked before `revokedBefore` leave the store (retention): their usage rows folded into
   * the account's `(revoked)` rows (groupKeyId), then the key rows deleted. Answers how many keys went.
   */
  pruneRevokedKeys(revokedBefore: string, limit: number): Promise<number>;
  /** Deletes sessions that expired by `now` (retention); answers how many. */
  pruneSessions(now: string): Promise<number>;

  createSession(session: Session): Promise<void>;
  getSession(idHash: string): Promise<Session | undefined>;
  deleteSession(idHash: string): Promise<void>;
  /**
   * Ends sessions of an account: every one (account suspended); with `memberId` null only those of the account's own
   * login, with a member's id only that member's (a password changed or reset, a member removed).
   */
  deleteSessionsOf(accountId: string, memberId?: string | null): Promise<void>;
  /** Keeps the account's `keep` newest live sessions and deletes the rest, expired ones included. */
  trimSessions(accountId: string, keep: number): Promise<void>;

  // Issue 22: members, tokens, mail outbox
  /** Refuses (StoreConflictError) an email another member has (compared case-insensitively). */
  createMember(member: NewMember): Promise<Member>;
  getMember(id: string): Promise<Member | undefined>;
  /** Emails are compared case-insensitively. */
  getMemberByEmail(email: string): Promise<Member | undefined>;
  /** The account's members, oldest first. */
  listMembers(accountId: string): Promise<Member[]>;
  updateMember(id: string, patch: MemberPatch): Promise<Member | undefined>;
  /** Deletes the member and its sessions. */
  deleteMember(id: string): Promise<boolean>;
  /** Revokes every key the member made that is not revoked yet (the member is being removed); answers how many. */
  revokeKeysMadeBy(memberId: string): Promise<number>;
  createAccountToken(token: AccountToken): Promise<void>;
  /**
   * Marks the token of this hash and kind used, if it is unused and unexpired at `now`, and answers it; otherwise
   * undefined. One statement: of two concurrent uses exactly one gets the token.
   */
  consumeAccountToken(idHash: string, kind: AccountToken['kind'], now: string): Promise<AccountToken | undefined>;
  /** The account's invitations not used and not expired at `now`, oldest first. */
  listInvitations(accountId: string, now: string): Promise<AccountToken[]>;
  /** Withdraws an unused invitation of the account by its public id. */
  deleteInvitation(accountId: string, id: string): Promise<boolean>;
  /** Drops tokens expired or used before `before` (retention); answers how many. */
  pruneAccountTokens(before: string): Promise<number>;
  enqueueMail(mail: NewOutboxMail): Promise<void>;
  /** Leases up to `limit` unsent messages due by `now` (not leased by another whose lease runs) to `owner` until `leaseUntil`. */
  claimMail(owner: string, now: string, leaseUntil: string, limit: number): Promise<OutboxMail[]>;
  /** Records an attempt at a leased message and ends the lease; sent (or given up): the body is emptied. Nothing if the lease is not `owner`'s. */
  recordMailAttempt(id: string, owner: string, attempt: MailAttempt): Promise<void>;
  /** The outbox, newest first (operators and tests look at what was written). */
  listMail(limit: number): Promise<OutboxMail[]>;
  /** Drops messages sent (or given up) before `before` (retention); answers how many. */
  pruneMail(before: string): Promise<number>;

  createWebhook(webhook: NewWebhook): Promise<Webhook>;
  getWebhook(id: string): Promise<Webhook | undefined>;
  /** An account's webhooks, oldest first; without `accountId`, everyone's. */
  listWebhooks(accountId?: string): Promise<Webhook[]>;
  updateWebhook(id: string, patch: WebhookPatch): Promise<Webhook | undefined>;
  deleteWebhook(id: string): Promise<boolean>;
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

  getMeta(name: string): Promise<string | undefined>;
  setMeta(name: string, value: string): Promise<void>;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
