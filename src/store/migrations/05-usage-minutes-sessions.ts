import { both } from './migration.ts';

/** Usage per key, network, method and outcome per minute (analytics), and dashboard sessions. */
export const usageMinutesSessions = both('usage-minutes-sessions', (t) => `CREATE TABLE usage_minutes (
     minute ${t.text} NOT NULL,
     account_id ${t.text} NOT NULL,
     key_id ${t.text} NOT NULL,
     network ${t.text} NOT NULL,
     method ${t.text} NOT NULL,
     code ${t.int} NOT NULL,
     requests ${t.big} NOT NULL,
     compute_units ${t.big} NOT NULL,
     latency_ms_sum ${t.big} NOT NULL,
     l0 ${t.big} NOT NULL, l1 ${t.big} NOT NULL, l2 ${t.big} NOT NULL, l3 ${t.big} NOT NULL, l4 ${t.big} NOT NULL, l5 ${t.big} NOT NULL,
     PRIMARY KEY (minute, key_id, network, method, code)
   )${t.rowless};
   CREATE INDEX usage_minutes_account ON usage_minutes (account_id, minute);
   CREATE TABLE sessions (
     id_hash ${t.text} PRIMARY KEY,
     account_id ${t.text} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
     csrf ${t.text} NOT NULL,
     created_at ${t.time} NOT NULL,
     expires_at ${t.time} NOT NULL
   );
   CREATE INDEX sessions_account ON sessions (account_id);`);
