import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecentMap } from './recent-map.ts';

const entry = () => ({ seen: 0, slot: -1 });

test('past its bound an entry not asked for since the last pass goes, one at a time: an entry asked for stays', () => {
  const m = new RecentMap<{ seen: number; slot: number }>(4);
  for (const k of ['a', 'b', 'c', 'd']) m.set(k, entry());
  assert.ok(m.get('a'), 'a, the oldest, asked for');
  m.set('e', entry());
  assert.equal(m.size, 4);
  assert.equal(m.get('b'), undefined, 'b, not asked for, went before a');
  assert.ok(m.get('c'), 'c asked for');
  m.set('f', entry());
  assert.equal(m.get('d'), undefined, 'd, not asked for, went before c');
  for (const k of ['a', 'c', 'e', 'f']) assert.ok(m.get(k), `${k} kept`);
  // A name taken out frees its place: the next one evicts nobody.
  m.delete('a');
  m.set('g', entry());
  assert.equal(m.size, 4);
  for (const k of ['c', 'e', 'f', 'g']) assert.ok(m.get(k), `${k} kept`);
});

test('a burst of new names never empties the map at once', () => {
  const m = new RecentMap<{ seen: number; slot: number }>(1000);
  for (let i = 0; i < 1000; i++) m.set(`k${i}`, entry());
  for (let i = 0; i < 10; i++) m.set(`new${i}`, entry());
  assert.equal(m.size, 1000);
  assert.equal(m.get('k9'), undefined);
  assert.ok(m.get('k10'), 'only the ten oldest went');
});
