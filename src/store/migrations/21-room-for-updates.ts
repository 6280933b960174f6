import type { Migration } from './migration.ts';

/**
 * Room left on each page of the tables whose rows are rewritten again and again, so PostgreSQL updates them in place
 * (a heap-only update: none of the table's indexes is written): a key's last use (every flush while it is used), the
 * hour and day usage rows (every flush of their hour or day), an account's month of units (every quota flush).
 * On a full page each such update is a new row version on another page and an entry in every index: 20,000 last
 * uses take the database about 690 ms with full pages and 190 ms with the room, a usage flush of 20,000 cells 1,100
 * and 760 ms (`SCALE_SECTIONS=writes npm run bench -- scale`). Minute rows are rarely written twice: a little room. Pages
 * already full keep their rows until rewritten; new pages have the room. SQLite has no fill factor: there the step
 * changes nothing (each dialect counts every step after the released ones, migrations.test.ts).
 */
export const roomForUpdates: Migration = {
  name: 'room-for-updates',
  sqlite: 'SELECT 1;',
  postgres: `ALTER TABLE api_keys SET (fillfactor = 70);
   ALTER TABLE usage SET (fillfactor = 70);
   ALTER TABLE usage_hours SET (fillfactor = 70);
   ALTER TABLE usage_days SET (fillfactor = 70);
   ALTER TABLE usage_minutes SET (fillfactor = 90);`,
};
