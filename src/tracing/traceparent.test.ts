import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseTraceparent, traceparentOf } from './traceparent.ts';

test("reads a caller's traceparent: its trace, its span, its flags", () => {
  assert.deepEqual(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'),
    { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true });
});

test('ignores what is not a traceparent: all-zero ids, version ff, upper case, extra fields on version 00', () => {
  for (const bad of [
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
    'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x', 'junk',
  ]) assert.equal(parseTraceparent(bad), undefined, bad);
});

test('a later version is read by its first four fields (W3C Trace Context §4.3)', () => {
  assert.equal(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more')?.spanId, '00f067aa0ba902b7');
});

test('names a span as the next hop’s parent, sampled', () => {
  assert.equal(traceparentOf({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 0 }), `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`);
});
