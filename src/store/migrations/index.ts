import type { Dialect } from '../sql/tables.ts';
import { keyStore } from './01-key-store.ts';
import { accounts } from './02-accounts.ts';
import { usage } from './03-usage.ts';
import { planMaxKeys } from './04-plan-max-keys.ts';
import { usageMinutesSessions } from './05-usage-minutes-sessions.ts';
import { webhooks } from './06-webhooks.ts';
import { webhookEventsHead } from './07-webhook-events-head.ts';
import { pagingRetentionIndexes } from './08-paging-retention-indexes.ts';
import { planMaxWebhooks } from './09-plan-max-webhooks.ts';
import { webhookCounters } from './10-webhook-counters.ts';
import { planSubscriptions } from './11-plan-subscriptions.ts';
import { webhookLastAttempt } from './12-webhook-last-attempt.ts';
import { teamTokensMail } from './13-team-tokens-mail.ts';
import { alerts } from './14-alerts.ts';
import { usageBatches } from './15-usage-batches.ts';
import { keyCreatedBy } from './16-key-created-by.ts';
import { keyRules } from './17-key-rules.ts';
import { keyChanges } from './18-key-changes.ts';
import { requestLog } from './19-request-log.ts';
import { usageGrains } from './20-usage-grains.ts';
import { roomForUpdates } from './21-room-for-updates.ts';
import { usageRollUp } from './22-usage-roll-up.ts';
import { keyChangeSignal } from './23-key-change-signal.ts';
import { byteOrderText } from './24-byte-order-text.ts';
import type { Migration } from './migration.ts';

export type { Migration } from './migration.ts';

/**
 * The schema of both stores, as one ordered list of steps, one file each. Each dialect runs the steps it has, in
 * this order: SQLite by `PRAGMA user_version` (migrate-sqlite.ts), PostgreSQL by `schema_migrations`
 * (migrate-postgres.ts), each counting the steps it ran. Never edit, remove or reorder a released step: add the
 * next one at the end (a step put before released ones would shift the versions databases already hold).
 */
export const MIGRATIONS: readonly Migration[] = [
  keyStore,
  accounts,
  usage,
  planMaxKeys,
  usageMinutesSessions,
  webhooks,
  webhookEventsHead,
  pagingRetentionIndexes,
  planMaxWebhooks,
  webhookCounters,
  planSubscriptions,
  webhookLastAttempt,
  teamTokensMail,
  alerts,
  usageBatches,
  keyCreatedBy,
  keyRules,
  keyChanges,
  requestLog,
  usageGrains,
  roomForUpdates,
  usageRollUp,
  keyChangeSignal,
  byteOrderText,
];

/** The DDL of the steps a dialect has, in order: its version N means the first N of these ran. */
export function migrationsOf(dialect: Dialect): string[] {
  return MIGRATIONS.flatMap((m) => (m[dialect] === undefined ? [] : [m[dialect]]));
}

/** Why a database is refused: its schema is from a Nodegate that knows more steps (guessing could damage it). */
export const newerThanKnown = (version: number, known: number) =>
  new Error(`the database is at schema version ${version}, newer than this Nodegate knows (${known})`);
