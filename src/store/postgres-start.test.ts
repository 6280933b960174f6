import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import pino from 'pino';
import { passesByWaiting, StoreStartError, waitForPostgres } from './postgres-start.ts';

const refusal = (code: string, message: string) => Object.assign(new Error(message), { code });

/** A start against `answers` (an error to throw, or 'ok'), on a clock that only the pauses move; its log lines. */
async function startAgainst(answers: Array<Error | 'ok'>, waitMs = 60_000) {
  let clock = 0;
  let tries = 0;
  const lines: Array<{ msg: string; attempt?: number; nextInMs?: number }> = [];
  const log = pino(new Writable({ write(c, _e, cb) { lines.push(JSON.parse(String(c))); cb(); } }));
  const open = async () => {
    const a = answers[Math.min(tries++, answers.length - 1)];
    if (a === 'ok') return 'store';
    throw a;
  };
  const result = waitForPostgres(open, { waitMs, where: 'PostgreSQL postgres://db:5432/ng', log, now: () => clock, sleep: async (ms) => { clock += ms; } });
  return { result: await result.then((v) => ({ ok: v }), (err: Error) => ({ err })), lines, tries: () => tries, clock: () => clock };
}

describe('waiting for PostgreSQL at start', () => {
  test('refused, then out of connections, then open: tried again with doubling pauses, each try logged', async () => {
    const s = await startAgainst([refusal('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), refusal('53300', 'sorry, too many clients already'), new Error('Connection terminated unexpectedly'), 'ok']);
    assert.deepEqual(s.result, { ok: 'store' });
    assert.equal(s.tries(), 4);
    const waits = s.lines.filter((l) => /^waiting for PostgreSQL/.test(l.msg));
    assert.deepEqual(waits.map((l) => l.nextInMs), [250, 500, 1000]);
    assert.match(waits[1].msg, /\(53300: sorry, too many clients already\): try 3 in 500 ms, giving up after 60 s/);
    assert.match(s.lines.at(-1)!.msg, /PostgreSQL takes connections/);
  });

  test('never reachable: gives up after waitMs, saying where, how often, the last cause and what to do', async () => {
    const s = await startAgainst([refusal('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')], 20_000);
    assert.ok('err' in s.result && s.result.err instanceof StoreStartError);
    assert.equal(s.clock(), 20_000, 'the last pause is cut to the time left');
    assert.match(s.result.err.message, /^PostgreSQL postgres:\/\/db:5432\/ng took no connection within 20 s \(\d+ tries; the last: ECONNREFUSED: connect ECONNREFUSED 127\.0\.0\.1:5432\)\. Check that PostgreSQL runs/);
    assert.match(s.result.err.message, /database\.startWaitMs$/);
    assert.ok(s.lines.every((l) => (l.nextInMs ?? 0) <= 5000), 'pauses stay at most 5 s');
  });

  test('a wrong password or a missing database ends the start at once, saying what to do', async () => {
    for (const [code, advice] of [['28P01', /check the user and password in DATABASE_URL/], ['3D000', /create the database, or correct its name/]] as const) {
      const s = await startAgainst([refusal(code, 'nope')]);
      assert.equal(s.tries(), 1, code);
      assert.ok('err' in s.result);
      assert.match(s.result.err.message, advice);
      assert.match(s.result.err.message, /waiting would not change this$/);
      assert.equal(s.lines.length, 0, 'no waiting logged');
    }
  });

  test('startWaitMs 0: no waiting, the same message at the first refusal', async () => {
    const s = await startAgainst([refusal('ECONNREFUSED', 'refused')], 0);
    assert.equal(s.tries(), 1);
    assert.ok('err' in s.result && /took no connection within 0 s \(1 tries/.test(s.result.err.message));
  });

  test('what passes by waiting: down, restarting, out of connections; not a refusal of the credentials or a migration error', () => {
    for (const c of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', '53300', '57P03', '08006']) assert.ok(passesByWaiting(refusal(c, 'x')), c);
    assert.ok(passesByWaiting(new Error('timeout exceeded when trying to connect')));
    for (const c of ['28P01', '28000', '3D000', '42P01', '53100']) assert.ok(!passesByWaiting(refusal(c, 'x')), c);
    assert.ok(!passesByWaiting(new Error('syntax error')));
  });
});
