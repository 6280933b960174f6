import { sql } from 'kysely';
import { isoTime, type Codec } from '../sql/codec.ts';
import { SqlDb } from '../sql/sql-db.ts';
import type { AlertsFiredTable } from '../sql/tables.ts';

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

function firedAlertFromRow(r: AlertsFiredTable, c: Codec): FiredAlert {
  return { accountId: r.account_id, kind: r.kind as AlertKind, threshold: Number(r.threshold), period: r.period, firedAt: c.time(r.fired_at), value: Number(r.value) };
}

/** The alert store on a database. */
export function alertStore(db: SqlDb): AlertStore {
  const { k, codec } = db;
  // The period a closed alert keeps is its firing time as text, the form times are kept in (toISOString): SQLite keeps
  // it so already; PostgreSQL keeps a timestamptz, and writes it out in that form.
  const firedAtText = db.dialect === 'postgres'
    ? sql<string>`to_char(fired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    : sql<string>`fired_at`;
  return {
    async getAlertSettings(accountId) {
      const row = await k.selectFrom('alert_settings').select('settings').where('account_id', '=', accountId).executeTakeFirst();
      return row && codec.json<AlertSettings>(row.settings);
    },
    async putAlertSettings(accountId, settings, updatedAt) {
      await k.insertInto('alert_settings').values({ account_id: accountId, settings: codec.toJson(settings), updated_at: isoTime(updatedAt) })
        .onConflict((oc) => oc.column('account_id').doUpdateSet((eb) => ({ settings: eb.ref('excluded.settings'), updated_at: eb.ref('excluded.updated_at') })))
        .execute();
    },
    async listAlertSettings() {
      const rows = await k.selectFrom('alert_settings').select(['account_id', 'settings']).orderBy('account_id').execute();
      return rows.map((r) => ({ accountId: r.account_id, settings: codec.json<AlertSettings>(r.settings) }));
    },
    async claimAlert(a) {
      const result = await k.insertInto('alerts_fired')
        .values({ account_id: a.accountId, kind: a.kind, threshold: a.threshold, period: a.period, fired_at: isoTime(a.firedAt), value: a.value })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      return SqlDb.changed(result) === 1;
    },
    async closeAlert(accountId, kind, threshold) {
      const result = await k.updateTable('alerts_fired').set({ period: firedAtText })
        .where('account_id', '=', accountId).where('kind', '=', kind).where('threshold', '=', threshold).where('period', '=', 'open')
        .executeTakeFirst();
      return SqlDb.changed(result) > 0;
    },
    async listFiredAlerts(accountId, limit) {
      const rows = await k.selectFrom('alerts_fired').selectAll().where('account_id', '=', accountId)
        .orderBy('fired_at', 'desc').orderBy('kind').orderBy('threshold').limit(limit).execute();
      return rows.map((r) => firedAlertFromRow(r, codec));
    },
  };
}
