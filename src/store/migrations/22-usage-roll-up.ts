import type { Migration } from './migration.ts';

/** The meta entry of the first hour whose calls the hour and day rows do not hold yet (usage-rows.ts HOURS_FROM). */
const NAME = 'usage.hoursFrom';

/**
 * Hour and day rows made by a roll-up of each hour's minute rows once the hour is over, no longer by every flush:
 * usage written per flush is one row per cell, not three. Until this step every flush wrote all three grains, so the
 * hour and day rows hold every call already kept: the first hour not rolled up is the one after the current hour and
 * after the last minute kept (a flush of a minute before it writes that minute's hour and day rows itself, as a late
 * flush does).
 */
export const usageRollUp: Migration = {
  name: 'usage-roll-up',
  sqlite: `INSERT INTO meta (name, value) SELECT '${NAME}', max(
       strftime('%Y-%m-%dT%H:00', 'now', '+1 hour'),
       coalesce((SELECT strftime('%Y-%m-%dT%H:00', substr(max(minute), 1, 13) || ':00', '+1 hour') FROM usage_minutes), ''))
     ON CONFLICT (name) DO NOTHING;`,
  postgres: `INSERT INTO meta (name, value) SELECT '${NAME}', to_char(greatest(
       date_trunc('hour', now() AT TIME ZONE 'UTC'),
       (SELECT (left(max(minute), 13) || ':00')::timestamp FROM usage_minutes)) + interval '1 hour', 'YYYY-MM-DD"T"HH24:MI')
     ON CONFLICT (name) DO NOTHING;`,
};
