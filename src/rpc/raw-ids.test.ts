import assert from 'node:assert/strict';
import { test } from 'node:test';
import { frameBody } from './framing.ts';
import { rawNumericIds } from './raw-ids.ts';

test('finds the text of each request object\'s own numeric id, not ids nested in params or strings', () => {
  assert.deepEqual(rawNumericIds('{"id":12345678901234567890,"method":"x","params":[{"id":1}]}', false), ['12345678901234567890']);
  const batch = '[{"id":0.5,"p":"a\\\\\\"id"},{"x":[1,{"id":3}],"id" : -1.5e3},5,{"\\u0069d":7,"id":"s"}]';
  const ids = rawNumericIds(batch, true);
  assert.deepEqual([ids[0], ids[1], ids[2], ids[3]], ['0.5', '-1.5e3', undefined, undefined]);
});

// How long the scan takes next to JSON.parse is measured by `npm run bench -- framing`; here, what makes it cheap:
// the body is parsed once, never a second time to read the ids (no lossless re-parse).
test('a 4 MiB body with a non-integer id is parsed once: the id is read by a scan, not by parsing the body again', () => {
  const body = `{"jsonrpc":"2.0","id":0.5,"method":"eth_chainId","params":[${'[1,{"a":"b"}],'.repeat(300_000)}0]}`;
  const parsed: number[] = [];
  const parse = JSON.parse;
  JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
    parsed.push(String(text).length);
    return parse(text, reviver);
  }) as typeof JSON.parse;
  let id: unknown;
  try {
    id = frameBody(body, 1000).items[0].id;
  } finally {
    JSON.parse = parse;
  }
  assert.equal((id as { json: string }).json, '0.5');
  assert.deepEqual(parsed, [body.length], 'one JSON.parse, of the body');
});
