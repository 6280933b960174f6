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

/** Alert settings per account, and the alerts that fired. */
export interface AlertStore {
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
}
