import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { PackedKeys } from './packed-keys.ts';

const digestOf = (s: string) => createHash('sha256').update(s).digest('binary');

test('finds each of 50,000 keys by its digest, through every growth of its arena and table', () => {
  const keys = new PackedKeys();
  for (let i = 0; i < 50_000; i++) assert.equal(keys.add(digestOf(`v${i}`), `key${i}\u001facct${i % 97}\u001fname ${i}`), true);
  assert.equal(keys.size, 50_000);
  for (let i = 0; i < 50_000; i += 7) assert.equal(keys.get(digestOf(`v${i}`)), `key${i}\u001facct${i % 97}\u001fname ${i}`);
  assert.equal(keys.get(digestOf('no such key')), undefined);
});

test('tells apart digests that start with the same four bytes', () => {
  const keys = new PackedKeys();
  const a = '\u0001'.repeat(32);
  const b = '\u0001'.repeat(31) + '\u0002';
  const c = '\u0001'.repeat(5) + '\u0009' + '\u0001'.repeat(26);
  keys.add(a, 'a');
  keys.add(b, 'b');
  assert.equal(keys.get(a), 'a');
  assert.equal(keys.get(b), 'b');
  assert.equal(keys.get(c), undefined, 'same head, same slot chain, another digest: not found');
});

test('keeps a name in any script as it was given', () => {
  const keys = new PackedKeys();
  keys.add(digestOf('x'), 'clé de prod · 本番 🔑');
  assert.equal(keys.get(digestOf('x')), 'clé de prod · 本番 🔑');
});
