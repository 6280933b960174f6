import type { Migration } from './migration.ts';

/** The meta entry of the first minute whose calls the hour and day rows do not hold yet (usage-rows.ts HOURS_FROM). */
const NAME = 'usage.hoursFrom';

/**
 * Hour and day rows made by a roll-up of the minute rows every few minutes, no longer by every flush:
 * usage written per flush is one row per cell, not three. Until this step every flush wrote all three grains, so the
 * hour and day rows hold every call kept: the first minute not rolled up is the hour after the last hour row (a flush of
 * a minute before it writes that minute's hour and day rows itself, as a late flush does), and on a store without
 * usage, the first of all ('').
 */
export const usageRollUp: Migration = {
  name: 'usage-roll-up',
  sqlite: `INSERT INTO meta (name, value)
     SELECT '${NAME}', coalesce(strftime('%Y-%m-%dT%H:00', max(minute), '+1 hour'), '') FROM usage_hours WHERE true
     ON CONFLICT (name) DO NOTHING;`,
  postgres: `INSERT INTO meta (name, value)
     SELECT '${NAME}', coalesce(to_char(max(minute)::timestamp + interval '1 hour', 'YYYY-MM-DD"T"HH24:00'), '') FROM usage_hours
     ON CONFLICT (name) DO NOTHING;`,
};
