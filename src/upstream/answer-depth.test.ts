import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nestedDeeperThan } from './answer-depth.ts';

test('nesting is measured exactly at the bound, however short the text that reaches it', () => {
  const nested = (d: number) => '['.repeat(d) + ']'.repeat(d);
  assert.equal(nestedDeeperThan(nested(5), 4), true, 'the shortest text 5 deep is over 4');
  assert.equal(nestedDeeperThan(nested(4), 4), false);
  assert.equal(nestedDeeperThan(`{"a":"${'['.repeat(50)}","b":${nested(3)}}`, 4), false, 'brackets inside strings do not count');
  assert.equal(nestedDeeperThan(`[${'{"result":"0x1"},'.repeat(500)}{"result":${nested(5)}}]`, 4), true, 'deep after a long flat part');
});
