import type { Logger } from 'pino';

/** Where a kind's shared truth is kept: Redis (instances, `limits.redisUrl`) or the workers' primary (`--workers N`). */
export type SharedAt = 'redis' | 'primary';

export interface FallbackOptions {
  /** The kind, for the log lines: 'per-second limits and failure guards'. */
  kind: string;
  /** What this process does while the shared store does not answer, for the log line: 'kept in this process's memory'. */
  meanwhile: string;
  at: SharedAt;
  /** host:port of Redis, or 'the primary process': for logs (never a URL: it may hold a password). */
  where: string;
  /** One round trip to the shared store; rejects while it does not answer. */
  ping(): Promise<unknown>;
  log: Logger;
  /** While degraded, how often at most to ask the shared store whether it is back. Default 3000 ms. */
  recheckMs?: number;
  /** The first connection: when it fails the kind starts degraded, without a call having to find out. */
  connecting?: Promise<unknown>;
  now?: () => number;
}

type Method = (...args: never[]) => unknown;
/** The names of `T`'s methods. */
export type MethodsOf<T> = { [K in keyof T]: T[K] extends Method ? K : never }[keyof T];

/** The one line a process logs when a kind's shared store stops answering, and the one when it answers again. */
export const UNREACHABLE = 'shared state unreachable: this process goes on alone until it answers again';
export const ANSWERS_AGAIN = 'shared state answers again: shared again';

/**
 * Redis, or the workers' primary, must not be a single point of failure of the gateway: when a kind's shared store
 * errors or times out, its calls are answered by a local stand-in instead (the memory variant, or what the kind does
 * alone: filters unavailable, the process's own head), with one warning per outage. While degraded no call waits on
 * the shared store: at most every `recheckMs` a ping, off the request path, finds out whether it is back; the next
 * calls then go to it again, said in one line. One Fallback per kind and store: a slow filter command does not
 * take the limits to memory.
 */
export class Fallback {
  /** Settles once the first connection has (either way). */
  readonly ready: Promise<void>;
  private state: SharedAt | 'degraded';
  private downSince = 0;
  private nextCheck = 0;
  private checking = false;
  private readonly recheckMs: number;
  private readonly now: () => number;

  constructor(private readonly o: FallbackOptions) {
    this.state = o.at;
    this.recheckMs = o.recheckMs ?? 3000;
    this.now = o.now ?? Date.now;
    this.ready = (o.connecting ?? Promise.resolve()).then(() => {}, (err: unknown) => this.degrade(err ?? new Error('no connection')));
  }

  /** For /readyz and logs. While degraded, also starts the (rate-limited, background) check for recovery. */
  status(): SharedAt | 'degraded' {
    if (this.state === 'degraded') this.recheck();
    return this.state;
  }

  /** Whether calls go to the shared store now (a status that is not 'degraded'). */
  sharing(): boolean {
    return this.status() !== 'degraded';
  }

  /**
   * `remote`'s `methods`, each answered by `remote` while it answers and by `local` (with the same arguments, at
   * once) while it does not: a call that fails degrades the kind, and is answered by `local` too.
   */
  wrap<T, K extends MethodsOf<T>>(remote: T, local: T, methods: readonly K[]): Pick<T, K> {
    const out = {} as Record<K, (...args: unknown[]) => unknown>;
    for (const m of methods) {
      const r = remote[m] as (...args: unknown[]) => unknown;
      const l = local[m] as (...args: unknown[]) => unknown;
      out[m] = (...args) => {
        if (!this.sharing()) return l.apply(local, args);
        let answer: unknown;
        try {
          answer = r.apply(remote, args);
        } catch (err) {
          this.degrade(err);
          return l.apply(local, args);
        }
        // An answer decided at once (a worker's share of a bucket) stays at once: no promise on the request path.
        if (!(answer instanceof Promise)) return answer;
        return answer.catch((err: unknown) => {
          this.degrade(err);
          return l.apply(local, args);
        });
      };
    }
    return out as unknown as Pick<T, K>;
  }

  private degrade(err: unknown): void {
    if (this.state === 'degraded') return; // calls failing together: one warning
    this.state = 'degraded';
    this.downSince = this.now();
    this.nextCheck = this.downSince + this.recheckMs;
    const { kind, where: at, meanwhile } = this.o;
    this.o.log.warn({ shared: kind, at, meanwhile, err: (err as Error)?.message ?? String(err) }, UNREACHABLE);
  }

  private recheck(): void {
    if (this.checking || this.now() < this.nextCheck) return;
    this.checking = true;
    this.o.ping().then(
      () => {
        if (this.state !== 'degraded') return;
        this.state = this.o.at;
        this.o.log.info({ shared: this.o.kind, at: this.o.where, downSeconds: Math.round((this.now() - this.downSince) / 1000) }, ANSWERS_AGAIN);
      },
      () => {},
    ).finally(() => {
      this.checking = false;
      this.nextCheck = this.now() + this.recheckMs;
    });
  }
}
