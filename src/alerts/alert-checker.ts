import type { Logger } from 'pino';
import { monthOf } from '../limits/quota.ts';
import type { MailQueue } from '../mail/mail-queue.ts';
import { minuteOf } from '../store/minute.ts';
import type { Account } from '../store/accounts/account.ts';
import type { AlertSettings, FiredAlert, AlertStore } from '../store/alerts/alert-store.ts';
import { alertRecipients, sendAlert, type Recipients } from './alert-notify.ts';
import type { MemberStore } from '../store/team/member-store.ts';
import type { WebhookStore } from '../store/webhooks/webhook-store.ts';
import type { WebhookEventStore } from '../store/webhooks/webhook-event-store.ts';
import type { PlanStore } from '../store/plans/plan-store.ts';
import type { AccountStore } from '../store/accounts/account-store.ts';
import type { UsageStore } from '../store/usage/usage-store.ts';

export interface AlertCheckerOptions {
  /** How often a round runs (alerts.checkMs). */
  checkMs: number;
  mail: MailQueue;
  /** Who is mailed (default: the account's own login). */
  recipients?: Recipients;
  /** Events were written to webhooks' outboxes: deliver them now. */
  written?: () => void;
  now?: () => number;
}

/** A measured value as alerts show it: two decimals at most. */
const rounded = (v: number) => Math.round(v * 100) / 100;

/**
 * The usage alerts' background check, run by every instance every `checkMs`: for each account with
 * settings, its quota used this month against the plan's, and its error rate over the last minutes. A threshold
 * crossed is claimed in the store (insert-if-absent on account, kind, threshold and period): of all instances,
 * the one whose claim wrote the row sends it, once. Quota alerts re-arm with the month (a new period); an
 * error-rate alert's row stays `open` while the rate is above, and is closed (re-armed) once it is under.
 * Claimed first, then sent: a store failure between the two loses that alert (logged) rather than sending it twice.
 */
export class AlertChecker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly now: () => number;
  private readonly recipients: Recipients;

  constructor(private readonly store: { plans: PlanStore; accounts: AccountStore; usage: UsageStore; alerts: AlertStore; members: MemberStore; webhooks: WebhookStore; webhookEvents: WebhookEventStore }, private readonly log: Logger, private readonly opts: AlertCheckerOptions) {
    this.now = opts.now ?? Date.now;
    this.recipients = opts.recipients ?? alertRecipients(store);
  }

  start(): void {
    this.timer = setInterval(() => void this.check(), this.opts.checkMs);
    this.timer.unref();
  }

  /** One round (after the one under way, never two at once); errors are logged, the next round tries again. */
  check(): Promise<void> {
    this.running = this.running.then(() => (this.closed ? undefined : this.round().catch((err: Error) => this.log.warn({ err: err.message }, 'alert check failed; the next one tries again'))));
    return this.running;
  }

  private async round(): Promise<void> {
    for (const { accountId, settings } of await this.store.alerts.listAlertSettings()) {
      if (this.closed) return;
      // One account at a time between callers' turns: SQLite answers without yielding, and a round covers every account.
      await new Promise(setImmediate);
      const account = await this.store.accounts.getAccount(accountId);
      if (!account || account.status !== 'active') continue;
      await this.quota(account, settings);
      await this.errorRate(account, settings);
    }
  }

  private async quota(account: Account, settings: AlertSettings): Promise<void> {
    if (settings.quotaPercents.length === 0) return;
    const plan = await this.store.plans.getPlan(account.planId);
    if (!plan || plan.cuPerMonth <= 0) return;
    const now = this.now();
    const month = monthOf(now);
    const percent = ((await this.store.usage.getUsage(account.id, month)) * 100) / plan.cuPerMonth;
    for (const threshold of settings.quotaPercents) {
      if (percent < threshold) break; // increasing order (normalizeAlertSettings)
      await this.fire(account, settings, { accountId: account.id, kind: 'quota', threshold, period: month, firedAt: new Date(now).toISOString(), value: rounded(percent) });
    }
  }

  private async errorRate(account: Account, settings: AlertSettings): Promise<void> {
    const rule = settings.errorRate;
    if (!rule) return;
    const now = this.now();
    // The last `minutes` whole minutes and the current one: rows are kept by minute.
    const sums = await this.store.usage.sumUsageMinutes({ accountId: account.id, from: minuteOf(now - rule.minutes * 60_000), to: minuteOf(now + 60_000) });
    // Too few calls say nothing of a rate: the alert neither fires nor re-arms on them.
    if (sums.requests < rule.minRequests) return;
    const percent = (sums.errors * 100) / sums.requests;
    if (percent >= rule.percent) {
      await this.fire(account, settings, { accountId: account.id, kind: 'errorRate', threshold: rule.percent, period: 'open', firedAt: new Date(now).toISOString(), value: rounded(percent) });
    } else if (await this.store.alerts.closeAlert(account.id, 'errorRate', rule.percent)) {
      this.log.info({ accountId: account.id, threshold: rule.percent, measured: rounded(percent) }, 'error-rate alert re-armed: the rate is back under its threshold');
    }
  }

  private async fire(account: Account, settings: AlertSettings, alert: FiredAlert): Promise<void> {
    if (!(await this.store.alerts.claimAlert(alert))) return; // fired already (here or by another instance)
    try {
      const events = await sendAlert({ store: this.store, mail: this.opts.mail, recipients: this.recipients, log: this.log }, account, settings, alert);
      if (events > 0) this.opts.written?.();
      // (`measured`, not `value`: the logger redacts fields named value, which hold key values elsewhere.)
      this.log.info({ accountId: account.id, kind: alert.kind, threshold: alert.threshold, measured: alert.value, period: alert.period, webhooks: events }, 'usage alert sent');
    } catch (err) {
      this.log.error({ err: (err as Error).message, accountId: account.id, kind: alert.kind, threshold: alert.threshold }, 'usage alert claimed but not sent');
    }
  }

  /** Stops the rounds; waits for the one under way. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.running;
  }
}
