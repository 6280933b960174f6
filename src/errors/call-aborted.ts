import { GatewayError } from './gateway-error.ts';

/**
 * Why a call was stopped before its answer came: its time budget ended (`deadline`: -32015 to the caller, as a
 * node that did not answer in time) or its caller went away (`caller_gone`: nobody is left to answer). The abort
 * reason of a call's AbortSignal (rpc/deadline.ts), passed down to the node's HTTP request, which is then aborted.
 * A caller that left says nothing about the node: the breaker does not count it, and no other node is asked.
 */
export class CallAborted extends GatewayError {
  constructor(readonly why: 'deadline' | 'caller_gone', limitMs?: number) {
    // The catalogue's message unchanged (callers match on it); the budget that ended goes in `data`.
    super('UPSTREAM_TIMEOUT', why === 'deadline' ? { budgetMs: limitMs } : {});
  }
}

/** The caller is gone: the node is not to blame, and no other node need be asked. */
export const callerGone = (err: unknown): boolean => err instanceof CallAborted && err.why === 'caller_gone';
