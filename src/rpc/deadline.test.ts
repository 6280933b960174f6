import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CallAborted, callerGone } from '../errors/call-aborted.ts';
import { RequestDeadline } from './deadline.ts';
import type { CallAbort } from '../errors/on-abort.ts';

test("a call's signal aborts at its own budget with -32015, the request's stays open", async () => {
  const request = new RequestDeadline(60_000);
  const call = request.forCall(5);
  await new Promise<void>((r) => call.onAbort(r));
  const reason = call.reason as CallAborted;
  assert.ok(reason instanceof CallAborted);
  assert.equal(reason.code, -32015);
  assert.equal(reason.data.budgetMs, 5);
  assert.equal(request.signal.aborted, false);
  request.done(call);
  request.end();
});

test('a caller gone aborts every call in flight and every later one, and says the node is not to blame', async () => {
  const request = new RequestDeadline(60_000);
  const calls = [request.forCall(60_000), request.forCall(60_000)];
  const heard = new Promise<void>((r) => calls[0].onAbort(r));
  request.callerGone();
  await heard;
  for (const c of calls) assert.ok(callerGone(c.reason));
  assert.ok(request.forCall(60_000).aborted, 'no call starts once the caller is gone');
  for (const c of calls) request.done(c);
  request.end();
});

test("the request's own budget ending aborts its calls in flight with -32015", async () => {
  const request = new RequestDeadline(5);
  const call = request.forCall(60_000);
  await new Promise<void>((r) => call.onAbort(r));
  const reason = call.reason as CallAborted;
  assert.equal(reason.code, -32015);
  assert.equal(reason.data.budgetMs, 5);
  assert.ok(request.signal.aborted);
  request.done(call);
  request.end();
});

test('calls that start together with one budget share its deadline: all end at it, and it is let go after the last', async () => {
  const request = new RequestDeadline(60_000);
  const first = request.forCall(5);
  const second = request.join(first);
  assert.equal(second, first);
  request.done(first);
  await new Promise<void>((r) => second.onAbort(r));
  assert.equal((second.reason as CallAborted).data.budgetMs, 5, 'the call still waiting ends at the budget');
  request.done(second);
  request.end();
});

test("a request's only call has the request's own deadline, ended by whichever budget ends first", async () => {
  const short = new RequestDeadline(60_000);
  const call = short.only(5);
  assert.equal(call, short.signal, 'no deadline of its own');
  await new Promise<void>((r) => call.onAbort(r));
  assert.equal((call.reason as CallAborted).data.budgetMs, 5, "the call's budget, shorter, ended it");
  short.end();
  const long = new RequestDeadline(5);
  const other = long.only(60_000);
  await new Promise<void>((r) => other.onAbort(r));
  assert.equal((other.reason as CallAborted).data.budgetMs, 5, "the request's budget, shorter, ended it");
  long.end();
});

test('a deadline let go calls none of its waiters: they hold their request, which must not outlive its answer', () => {
  const request = new RequestDeadline(60_000);
  const call = request.forCall(60_000);
  let heard = false;
  call.onAbort(() => { heard = true; });
  request.done(call);
  (call as CallAbort).abort(new CallAborted('deadline', 1));
  assert.equal(heard, false);
  request.end();
});
