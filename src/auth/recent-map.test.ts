import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecentMap } from './recent-map.ts';

const entry = () => ({ moved: 0 });

test('past its bound the least recently used entry goes, one at a time: an entry asked for stays', () => {
  const m = new RecentMap<{ moved: number }>(4);
  for (const k of ['a', 'b', 'c', 'd']) m.set(k, entry());
  assert.ok(m.get('a'), 'a, the oldest, asked for');
  m.set('e', entry());
  assert.equal(m.size, 4);
  assert.equal(m.get('b'), undefined, 'b, the least recently used, went');
  for (const k of ['a', 'c', 'd', 'e']) assert.ok(m.get(k), `${k} kept`);
  m.set('f', entry());
  m.set('g', entry());
  // c and d were asked for last among the older ones; a and e after them, so the next two out are the ones not asked for since.
  assert.equal(m.size, 4);
  assert.ok(m.get('f') && m.get('g'));
});

test('a burst of new names never empties the map at once', () => {
  const m = new RecentMap<{ moved: number }>(1000);
  for (let i = 0; i < 1000; i++) m.set(`k${i}`, entry());
  for (let i = 0; i < 10; i++) m.set(`new${i}`, entry());
  assert.equal(m.size, 1000);
  assert.equal(m.get('k9'), undefined);
  assert.ok(m.get('k10'), 'only the ten oldest went');
});
