import type { Logger } from 'pino';
import { can } from '../accounts/roles.ts';
import type { MailQueue } from '../mail/mail-queue.ts';
import { writeAccountEvent } from '../webhooks/account-events.ts';
import type { Account } from '../store/accounts/account.ts';
import type { AlertSettings, FiredAlert } from '../store/alerts/alert-store.ts';
import type { WebhookStore } from '../store/webhooks/webhook-store.ts';
import type { WebhookEventStore } from '../store/webhooks/webhook-event-store.ts';
import type { MemberStore } from '../store/team/member-store.ts';

/** The webhook kind alerts are sent to (the webhooks API lists it among its kinds). */
export const USAGE_THRESHOLD_KIND = 'usage.threshold';

/** What a `usage.threshold` event carries (its `event` field, in the outbox's usual envelope). */
export interface UsageThresholdPayload {
  kind: FiredAlert['kind'];
  threshold: number;
  value: number;
  period: string;
  accountId: string;
  at: string;
}

/** Who is mailed an account's alerts. */
export type Recipients = (account: Account) => Promise<string[]>;

/**
 * The account's own login and its members who can act on an alert (owners and developers, accounts/roles.ts
 * `changeAlerts`); a viewer reads alerts on the dashboard but is not mailed.
 */
export const alertRecipients = (store: { members: MemberStore }): Recipients => async (account) => {
  const members = await store.members.listMembers(account.id);
  return [...new Set([account.email, ...members.filter((m) => can(m.role, 'changeAlerts')).map((m) => m.email)])];
};

/**
 * Sends one alert that this instance claimed (it alone sends it): a mail to each recipient when the account wants
 * mail, and an event in the outbox of each of the account's `usage.threshold` webhooks (webhooks/account-events.ts:
 * a paused one keeps it for its resume). Answers how many events were written.
 */
export async function sendAlert(deps: { store: { webhooks: WebhookStore; webhookEvents: WebhookEventStore }; mail: MailQueue; recipients: Recipients; log: Logger }, account: Account, settings: AlertSettings, alert: FiredAlert): Promise<number> {
  const { store, mail, log } = deps;
  const payload: UsageThresholdPayload = { kind: alert.kind, threshold: alert.threshold, value: alert.value, period: alert.period, accountId: account.id, at: alert.firedAt };
  // One event per crossing (its firing time in it: an error-rate alert that re-arms and fires again is a new one).
  const events = await writeAccountEvent(store, account.id, USAGE_THRESHOLD_KIND, `${alert.kind}|${alert.threshold}|${alert.period}|${alert.firedAt}`, payload, alert.firedAt);
  if (settings.email) {
    const { subject, text } = mailOf(account, alert);
    for (const to of await deps.recipients(account)) {
      await mail.enqueue({ to, subject, text }).catch((err: Error) => log.warn({ err: err.message, accountId: account.id, kind: alert.kind }, 'alert mail not queued'));
    }
  }
  return events;
}

/** The alert's mail: what crossed, by how much, and where to look. */
function mailOf(account: Account, a: FiredAlert): { subject: string; text: string } {
  if (a.kind === 'quota') {
    return {
      subject: `Nodegate: ${a.threshold}% of the monthly quota used (${account.name})`,
      text: `The account ${account.name} has used ${a.value}% of its plan's compute units for ${a.period}, past the alert at ${a.threshold}%.\n\n`
        + 'Requests are refused with 429 once the quota is used up, until the month ends or the plan changes. The dashboard\'s Usage page shows which keys and methods used it.\n',
    };
  }
  return {
    subject: `Nodegate: error rate ${a.value}% (alert at ${a.threshold}%) for ${account.name}`,
    text: `${a.value}% of the calls of the account ${account.name} were answered with an error recently, past the alert at ${a.threshold}%.\n\n`
      + 'The dashboard\'s Usage page, filtered by status "error", shows which codes, keys and methods. This alert is sent again only after the rate falls back under the threshold.\n',
  };
}
