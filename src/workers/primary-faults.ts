import type { Logger } from 'pino';

/** The part of `process` the policy listens on (an EventEmitter in tests). */
export interface FaultSource {
  on(event: 'uncaughtException', fn: (err: Error, origin: string) => void): unknown;
  on(event: 'unhandledRejection', fn: (reason: unknown) => void): unknown;
  off(event: 'uncaughtException', fn: (err: Error, origin: string) => void): unknown;
  off(event: 'unhandledRejection', fn: (reason: unknown) => void): unknown;
}

/**
 * What the primary of `--workers N` does with an error nothing caught: it logs it (pino, `fatal` for a thrown
 * exception, `error` for a rejection nobody awaited) and keeps serving. The primary owns every worker, the embedded
 * chains and the state the workers share; node's default (print and exit) would end all of them for one fault. What
 * reaches here is a fault of one handler (a request's, an IPC call's, a timer's) that its own try/catch did not cover:
 * the chain server and the IPC server answer their own failures (500, an error reply), so such a fault has left at
 * most that one request unanswered. The state it may have left half-changed is a map of counters or heads, which
 * the next call corrects; the chains' own state is in anvil and its journal, out of this process. Returns the way
 * to stop listening (the primary's stop).
 */
export function keepServingOnFaults(source: FaultSource, log: Logger): () => void {
  const thrown = (err: Error, origin: string) => log.fatal({ err, origin }, 'primary: an error nothing caught; logged, and the primary keeps serving');
  const rejected = (reason: unknown) => log.error({ err: reason }, 'primary: a rejected promise nothing awaited; logged, and the primary keeps serving');
  source.on('uncaughtException', thrown);
  source.on('unhandledRejection', rejected);
  return () => {
    source.off('uncaughtException', thrown);
    source.off('unhandledRejection', rejected);
  };
}
