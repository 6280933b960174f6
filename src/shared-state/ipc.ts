/**
 * Calls from a worker to the primary over the cluster's IPC channel (`nodegate start --workers N`): the
 * primary keeps the state the workers share (the memory variants of the rate limiter, filter store, heads and login
 * back-off) and answers each call with what the same call on one process would answer. The primary also tells the
 * workers of events (a higher head, a chain that restarted) by topic.
 *
 * Messages are plain JSON (the channel's default serialisation): the shared state is plain data by design, as it is
 * for Redis.
 */

/** A worker's call: `svc.method(...args)` in the primary. */
export interface PrimaryCall { id: number; svc: string; method: string; args: unknown[] }
/** The primary's answer to call `id`: a value, or an error's name, message and catalogue code. */
export interface Reply { id: number; value?: unknown; error?: { name: string; message: string; code?: string } }
/**
 * The calls a worker made in one turn of its event loop, in one message (each request asks the limiter and the
 * head: under load, one message carries many requests' calls, and the primary answers them in one message too).
 */
export interface CallsMessage { ng: 'calls'; calls: PrimaryCall[] }
export interface RepliesMessage { ng: 'replies'; replies: Reply[] }
/** The primary's news for every worker (or every worker but the one it came from). */
export interface EventMessage { ng: 'event'; topic: string; data: unknown }

export type IpcMessage = CallsMessage | RepliesMessage | EventMessage;

/** A protocol: services by name, each an object of methods (workers/protocol.ts is the gateway's). */
export type Services<P> = { [S in keyof P]: { [M in keyof P[S]]: (...args: never[]) => unknown } };
/** The arguments of `P[S][M]`, as they travel. */
export type ArgsOf<P, S extends keyof P, M extends keyof P[S]> = P[S][M] extends (...args: infer A) => unknown ? A : never;
/** What `P[S][M]` answers, once settled. */
export type ResultOf<P, S extends keyof P, M extends keyof P[S]> = P[S][M] extends (...args: never[]) => infer R ? Awaited<R> : never;
/** The primary's side of service `T`: each method takes the call's arguments and the calling worker's id. */
export type Handlers<T> = { [M in keyof T]: T[M] extends (...args: infer A) => infer R ? (args: A, worker: number) => R | Promise<Awaited<R>> : never };

export function isIpcMessage(m: unknown): m is IpcMessage {
  return typeof m === 'object' && m !== null && typeof (m as { ng?: unknown }).ng === 'string';
}

/** What a failed call rejects with in the worker: the primary's error, by name and message. */
export class PrimaryCallError extends Error {
  constructor(name: string, message: string, readonly code?: string) {
    super(message);
    this.name = name;
  }
}

/** The channel a worker has to its primary (`process` in a cluster worker). */
export interface Channel {
  send(message: IpcMessage): unknown;
  on(event: 'message', fn: (m: unknown) => void): unknown;
  off(event: 'message', fn: (m: unknown) => void): unknown;
}

/**
 * What a worker asks of its primary, in protocol `P` with events `E`: a narrower protocol's view of a client of a
 * wider one (the shared state's variants take the client of the workers' whole protocol).
 */
export interface Asks<P extends Services<P>, E = Record<never, never>> {
  call<S extends keyof P & string, M extends keyof P[S] & string>(svc: S, method: M, args: ArgsOf<P, S, M>): Promise<ResultOf<P, S, M>>;
  on<T extends keyof E>(topic: T, fn: (data: E[T]) => void): void;
}

/**
 * The worker's side: `call` sends and resolves with the primary's answer, `on` hears the primary's events. Every
 * call has a time-out: a primary that does not answer (it is the process that owns the chains; if it hangs, so does
 * the service) fails the call instead of holding the caller forever.
 */
export class PrimaryClient<P extends Services<P>, E = Record<never, never>> implements Asks<P, E> {
  private next = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private readonly topics = new Map<keyof E, Array<(data: never) => void>>();
  private readonly listener = (m: unknown) => this.receive(m);
  /** The calls of this turn, sent together when it ends. */
  private queued: PrimaryCall[] | undefined;

  constructor(private readonly channel: Channel, private readonly timeoutMs = 5000) {
    channel.on('message', this.listener);
  }

  call<S extends keyof P & string, M extends keyof P[S] & string>(svc: S, method: M, args: ArgsOf<P, S, M>): Promise<ResultOf<P, S, M>> {
    const id = this.next++;
    return new Promise<ResultOf<P, S, M>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new PrimaryCallError('PrimaryTimeout', `the primary did not answer ${svc}.${method} within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      if (!this.queued) {
        const calls: PrimaryCall[] = (this.queued = []);
        setImmediate(() => {
          this.queued = undefined;
          this.channel.send({ ng: 'calls', calls });
        });
      }
      this.queued.push({ id, svc, method, args: leftOut(args) });
    });
  }

  on<T extends keyof E>(topic: T, fn: (data: E[T]) => void): void {
    const list = this.topics.get(topic) ?? [];
    list.push(fn);
    this.topics.set(topic, list);
  }

  private receive(m: unknown): void {
    if (!isIpcMessage(m)) return;
    if (m.ng === 'replies') {
      for (const r of m.replies) {
        const p = this.pending.get(r.id);
        if (!p) continue;
        this.pending.delete(r.id);
        clearTimeout(p.timer);
        if (r.error) p.reject(new PrimaryCallError(r.error.name, r.error.message, r.error.code));
        else p.resolve(r.value);
      }
    } else if (m.ng === 'event') {
      // The event's data is what the primary sent for its topic (PrimaryServer's `event` is typed by E).
      for (const fn of this.topics.get(m.topic as keyof E) ?? []) fn(m.data as never);
    }
  }

  close(): void {
    this.channel.off('message', this.listener);
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new PrimaryCallError('PrimaryClosed', 'the worker is stopping'));
    }
    this.pending.clear();
  }
}

/** A service as the wire reaches it: methods by the name a message spells. */
type WireService = Record<string, (args: unknown[], worker: number) => unknown>;

/** The primary's side: answers each worker's calls from the services, in the order they came. */
export class PrimaryServer<P extends Services<P>> {
  private readonly services = new Map<string, WireService>();

  /** Answers the calls of service `name`, one handler per method of the protocol's `P[name]`. */
  offer<S extends keyof P & string>(name: S, service: Handlers<P[S]>): void {
    // Typed on the way in; a message names its service and method as strings, checked when it arrives.
    this.services.set(name, service as unknown as WireService);
  }

  /**
   * Handles one message of `worker`; `reply` sends to that worker. The calls are run in order; the answers go back
   * in one message once every call has answered (most answer at once: the state is in memory).
   */
  handle(m: unknown, worker: number, reply: (r: RepliesMessage) => void): void {
    if (!isIpcMessage(m) || m.ng !== 'calls') return;
    const replies: Reply[] = [];
    const later: Promise<void>[] = [];
    for (const c of m.calls) {
      const svc = this.services.get(c.svc);
      const fn = svc && Object.hasOwn(svc, c.method) ? svc[c.method] : undefined;
      if (!fn) {
        replies.push({ id: c.id, error: { name: 'Error', message: `no ${c.svc}.${c.method} in the primary` } });
        continue;
      }
      try {
        const out = fn(c.args, worker);
        if (out instanceof Promise) later.push(out.then((value) => { replies.push({ id: c.id, value }); }, (err) => { replies.push({ id: c.id, error: errorOf(err) }); }));
        else replies.push({ id: c.id, value: out });
      } catch (err) {
        replies.push({ id: c.id, error: errorOf(err) });
      }
    }
    if (later.length === 0) reply({ ng: 'replies', replies });
    else void Promise.all(later).then(() => reply({ ng: 'replies', replies }));
  }
}

/**
 * The arguments without the optional ones left out at the end: JSON makes an undefined in an array null, and a
 * method's default (`after?: number`, `credit = 0`) would see null instead of nothing.
 */
function leftOut(args: readonly unknown[]): unknown[] {
  let n = args.length;
  while (n > 0 && args[n - 1] === undefined) n--;
  return n === args.length ? (args as unknown[]) : args.slice(0, n);
}

/** The message telling `topic` to a worker. */
export function eventMessage<E, T extends keyof E & string>(topic: T, data: E[T]): EventMessage {
  return { ng: 'event', topic, data };
}

function errorOf(err: unknown): Reply['error'] {
  const e = err as { name?: string; message?: string; code?: string };
  return { name: e?.name ?? 'Error', message: e?.message ?? String(err), code: typeof e?.code === 'string' ? e.code : undefined };
}
