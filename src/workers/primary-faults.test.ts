import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { keepServingOnFaults } from './primary-faults.ts';

function capture() {
  const lines: Array<Record<string, any>> = [];
  const out = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { lines, log: pino({ base: undefined }, out) };
}

test('an uncaught exception and an unhandled rejection are logged, and listening stops with the primary', async () => {
  const source = new EventEmitter();
  const { lines, log } = capture();
  const stop = keepServingOnFaults(source, log);
  source.emit('uncaughtException', new Error('boom'), 'uncaughtException');
  source.emit('unhandledRejection', new Error('late'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(lines.map((l) => [l.level, l.err?.message]), [[60, 'boom'], [50, 'late']]);
  stop();
  assert.equal(source.listenerCount('uncaughtException') + source.listenerCount('unhandledRejection'), 0);
});
