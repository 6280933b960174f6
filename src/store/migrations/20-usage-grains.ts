import { both, type ColumnTypes } from './migration.ts';

const SUMMED = 'requests, compute_units, latency_ms_sum, l0, l1, l2, l3, l4, l5';
const SUMS = SUMMED.split(', ').map((c) => `sum(${c})`).join(', ');

/** A table of usage rows at one grain: the columns of usage_minutes, `minute` holding the bucket's first minute. */
const table = (name: string, t: ColumnTypes) => `CREATE TABLE ${name} (
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
   CREATE INDEX ${name}_account_rows ON ${name} (account_id, minute, key_id, network, method, code);`;

/** The rows already kept, folded into `name` at the bucket `bucket` (an SQL expression of `minute`). */
const fill = (name: string, bucket: string) => `INSERT INTO ${name} (minute, account_id, key_id, network, method, code, ${SUMMED})
     SELECT ${bucket}, account_id, key_id, network, method, code, ${SUMS} FROM usage_minutes WHERE account_id <> ''
     GROUP BY ${bucket}, account_id, key_id, network, method, code;
   INSERT INTO ${name} (minute, account_id, key_id, network, method, code, ${SUMMED})
     SELECT ${bucket}, '', '', network, method, code, ${SUMS} FROM usage_minutes WHERE account_id <> ''
     GROUP BY ${bucket}, network, method, code;`;

/**
 * Usage at the grains reports read: a range of days reads day rows and a range of hours hour rows, so a report's
 * cost follows its buckets, not the minutes in its range. Each grain also keeps everyone's calls added up (account
 * and key ''), which the operator's report of all accounts reads instead of every account's rows. Filled from the
 * minute rows already kept.
 */
export const usageGrains = both('usage-grains', (t) => [
  table('usage_hours', t),
  table('usage_days', t),
  fill('usage_hours', `substr(minute, 1, 13) || ':00'`),
  fill('usage_days', `substr(minute, 1, 10) || 'T00:00'`),
  `INSERT INTO usage_minutes (minute, account_id, key_id, network, method, code, ${SUMMED})
     SELECT minute, '', '', network, method, code, ${SUMS} FROM usage_minutes WHERE account_id <> ''
     GROUP BY minute, network, method, code;`,
].join('\n   '));
