import type { Next, Stage } from './call.ts';

/**
 * A pipeline stage that marks its passing on the request's span, as an event (with the method, and the cache's
 * outcome once the cache stage has answered): a span per stage would cost an object, its export and a context
 * switch per stage for the few microseconds a stage takes, while the upstream attempts (the time that matters)
 * are spans. Used only when tracing is on; an unsampled call pays one field read.
 */
export const tracedStage = (name: string, stage: Stage): Stage => (call, next) => {
  const t = call.signal.trace;
  if (t === undefined) return stage(call, next);
  t.step(`stage ${name}`, { 'rpc.method': call.method });
  if (name !== 'cache') return stage(call, next);
  return stage(call, next).then((a) => {
    if (call.cache !== undefined) t.step('cache', { 'nodegate.cache': call.cache });
    return a;
  });
};

/** The last step (`forward` to a node, or `local`), marked as the stages are. */
export const tracedLast = (name: string, last: Next): Next => {
  const stage = tracedStage(name, (call) => last(call));
  return (call) => stage(call, last);
};
