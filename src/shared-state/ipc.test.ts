import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { PrimaryCallError, PrimaryClient, PrimaryServer, type Channel, type IpcMessage } from './ipc.ts';

/** A protocol of this test's own: `nothing` is declared but never offered. */
interface TestProtocol {
  counter: { add(n: number): { total: number; worker: number }; later(n: number): Promise<number>; fail(): void; since(a: string, after?: number): string };
  limiter: { consume(): void };
  nothing: { here(): void };
}
interface TestEvents { head: { key: string; n: number }; other: number }

/** A worker's channel to a primary in the same process: messages go through JSON, as over the real pipe. */
function pair(server: PrimaryServer<TestProtocol>, opts: { silent?: boolean } = {}) {
  const worker = new EventEmitter();
  const sent: IpcMessage[] = [];
  const channel: Channel = {
    send: (m) => {
      sent.push(m);
      if (opts.silent) return;
      const copy = JSON.parse(JSON.stringify(m)) as unknown;
      setImmediate(() => server.handle(copy, 7, (r) => setImmediate(() => worker.emit('message', JSON.parse(JSON.stringify(r))))));
    },
    on: (e, fn) => worker.on(e, fn),
    off: (e, fn) => worker.off(e, fn),
  };
  return { channel, sent, worker };
}

test('the calls of one turn go in one message and each gets its own answer, errors by name and message', async () => {
  const server = new PrimaryServer<TestProtocol>();
  let last = 0;
  server.offer('counter', {
    add: ([n], worker) => { last += n; return { total: last, worker }; },
    later: async ([n]) => n * 2,
    fail: () => { throw Object.assign(new Error('no such thing'), { name: 'GatewayError', code: 'FILTERS_UNAVAILABLE' }); },
    since: () => '',
  });
  const { channel, sent } = pair(server);
  const client = new PrimaryClient<TestProtocol>(channel);
  const answers = await Promise.allSettled([
    client.call('counter', 'add', [2]),
    client.call('counter', 'add', [3]),
    client.call('counter', 'later', [21]),
    client.call('counter', 'fail', []),
    client.call('nothing', 'here', []),
  ]);
  assert.equal(sent.length, 1, 'one message for the five calls');
  assert.deepEqual(answers.slice(0, 3).map((a) => (a as PromiseFulfilledResult<unknown>).value), [{ total: 2, worker: 7 }, { total: 5, worker: 7 }, 42]);
  const failed = (answers[3] as PromiseRejectedResult).reason as PrimaryCallError;
  assert.ok(failed instanceof PrimaryCallError);
  assert.equal(failed.name, 'GatewayError');
  assert.equal(failed.message, 'no such thing');
  assert.equal(failed.code, 'FILTERS_UNAVAILABLE');
  assert.match(((answers[4] as PromiseRejectedResult).reason as Error).message, /no nothing.here in the primary/);
});

test('an optional argument left out arrives left out, not as the null JSON makes of undefined', async () => {
  const server = new PrimaryServer<TestProtocol>();
  server.offer('counter', {
    add: () => ({ total: 0, worker: 0 }), later: async () => 0, fail: () => {},
    since: (args) => `${args.length} ${args[1] === undefined ? 'none' : String(args[1])}`,
  });
  const client = new PrimaryClient<TestProtocol>(pair(server).channel);
  assert.deepEqual(await Promise.all([client.call('counter', 'since', ['a']), client.call('counter', 'since', ['a', undefined]), client.call('counter', 'since', ['a', 3])]), ['1 none', '1 none', '2 3']);
  client.close();
});

test('a primary that does not answer fails the call at its time-out, and events reach their topic', async () => {
  const { channel, worker } = pair(new PrimaryServer<TestProtocol>(), { silent: true });
  const client = new PrimaryClient<TestProtocol, TestEvents>(channel, 50);
  await assert.rejects(client.call('limiter', 'consume', []), (err: Error) => err.name === 'PrimaryTimeout');
  const heard: unknown[] = [];
  client.on('head', (d) => heard.push(d));
  worker.emit('message', { ng: 'event', topic: 'head', data: { key: 'k', n: 5 } });
  worker.emit('message', { ng: 'event', topic: 'other', data: 1 });
  worker.emit('message', 'not ours');
  assert.deepEqual(heard, [{ key: 'k', n: 5 }]);
  client.close();
});
