import { both } from './migration.ts';

/**
 * Alert settings per account, and the alerts that fired (one row per crossing: its primary key is what makes
 * several instances send an alert once).
 */
export const alerts = both('alerts', (t) => `CREATE TABLE alert_settings (
     account_id ${t.text} PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
     settings ${t.json} NOT NULL,
     updated_at ${t.time} NOT NULL
   );
   CREATE TABLE alerts_fired (
     account_id ${t.text} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     kind ${t.text} NOT NULL,
     threshold ${t.real} NOT NULL,
     period ${t.text} NOT NULL,
     fired_at ${t.time} NOT NULL,
     value ${t.real} NOT NULL,
     PRIMARY KEY (account_id, kind, threshold, period)
   );
   CREATE INDEX alerts_fired_recent ON alerts_fired (account_id, fired_at);`);
