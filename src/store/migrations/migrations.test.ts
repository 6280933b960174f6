import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIGRATIONS, migrationsOf } from './index.ts';

/**
 * The steps databases already hold, in order, per dialect: a version is a count of steps, so a step inserted,
 * removed or moved among these would make a database run a step twice or skip one. New steps go after them.
 */
const RELEASED = [
  'key-store', 'accounts', 'usage', 'plan-max-keys', 'usage-minutes-sessions', 'webhooks', 'webhook-events-head',
  'paging-retention-indexes', 'plan-max-webhooks', 'webhook-counters', 'plan-subscriptions', 'webhook-last-attempt',
  'team-tokens-mail', 'alerts', 'usage-batches', 'key-created-by',
];

test('the released steps keep their places, on each dialect (SQLite has the 0.1 key store first; PostgreSQL never had it)', () => {
  assert.deepEqual(MIGRATIONS.slice(0, RELEASED.length).map((m) => m.name), RELEASED);
  assert.deepEqual(MIGRATIONS.filter((m) => m.sqlite !== undefined).slice(0, 16).map((m) => m.name), RELEASED);
  assert.deepEqual(MIGRATIONS.filter((m) => m.postgres !== undefined).slice(0, 15).map((m) => m.name), RELEASED.slice(1));
});

test('every step after the released ones has both dialects, and names are unique', () => {
  for (const m of MIGRATIONS.slice(RELEASED.length)) assert.ok(m.sqlite !== undefined && m.postgres !== undefined, `${m.name} on both dialects`);
  assert.equal(new Set(MIGRATIONS.map((m) => m.name)).size, MIGRATIONS.length);
  assert.equal(migrationsOf('sqlite').length - migrationsOf('postgres').length, 1);
});
