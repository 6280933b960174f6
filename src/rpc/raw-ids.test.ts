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

test('a 4 MiB body with a non-integer id is framed in about the time of one JSON.parse, not two parses', () => {
  const body = `{"jsonrpc":"2.0","id":0.5,"method":"eth_chainId","params":[${'[1,{"a":"b"}],'.repeat(300_000)}0]}`;
  let parse = Infinity;
  let frame = Infinity;
  for (let r = 0; r < 3; r++) {
    let t0 = performance.now();
    JSON.parse(body);
    parse = Math.min(parse, performance.now() - t0);
    t0 = performance.now();
    const { items } = frameBody(body, 1000);
    frame = Math.min(frame, performance.now() - t0);
    assert.equal((items[0].id as { json: string }).json, '0.5');
  }
  console.log(`${(body.length / 2 ** 20).toFixed(1)} MiB with id 0.5: JSON.parse ${parse.toFixed(0)} ms, framed (parse + id scan) ${frame.toFixed(0)} ms`);
  // The lossless re-parse took several times JSON.parse on such a body; the scan adds a fraction of one.
  assert.ok(frame < parse * 2, `framing ${frame.toFixed(0)} ms against JSON.parse ${parse.toFixed(0)} ms`);
});
