import type { LoginBackoffStore } from '../login-backoff/login-backoff.ts';
import { headKey, TurnReads, type HeadsHub, type SharedHead } from '../heads/heads-hub.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { FilterState, FilterStore } from '../filter-store/filter-store.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import type { OpenedRateLimiter } from '../open-shared-state.ts';
import type { RateDecision } from './rate-limiter.ts';
import type { ArgsOf, ResultOf } from '../ipc.ts';
import type { SharedStateClient, SharedStateProtocol } from '../protocol.ts';

/** A worker's client of its primary, typed by the protocol. */
export type ToPrimary = SharedStateClient;

/**
 * A worker's view of the state the primary keeps (primary-state.ts): the same interfaces as the memory and Redis
 * variants, each call answered by the primary. When the primary does not answer in time, each part degrades as its
 * Redis variant does: limits from this worker's memory, filters FILTERS_UNAVAILABLE, the head this worker's own.
 */

/** The per-second limits, decided by the primary: one bucket per account however many workers serve it. */
export class RemoteRateLimiter implements OpenedRateLimiter {
  private readonly local = new MemoryRateLimiter();
  private failing = false;

  constructor(private readonly primary: ToPrimary, private readonly warn: (msg: string) => void) {}

  consume(bucket: string, cost: number, ratePerSecond: number, burst: number, credit?: number): Promise<RateDecision> {
    return this.primary.call('limiter', 'consume', [bucket, cost, ratePerSecond, burst, credit]).then((d) => {
      this.failing = false;
      return d;
    }, () => {
      if (!this.failing) this.warn('the primary does not answer: limits are kept in this worker until it does');
      this.failing = true;
      return this.local.consume(bucket, cost, ratePerSecond, burst, credit);
    });
  }

  status(): 'primary' | 'degraded' {
    return this.failing ? 'degraded' : 'primary';
  }

  close(): Promise<void> {
    return this.local.close();
  }
}

/** Filters in the primary: a filter made through one worker polls through any other. */
export class RemoteFilterStore implements FilterStore {
  private lastSize = 0;
  private sizeAsked = 0;

  constructor(private readonly primary: ToPrimary) {}

  private ask<M extends keyof SharedStateProtocol['filters'] & string>(method: M, args: ArgsOf<SharedStateProtocol, 'filters', M>): Promise<ResultOf<SharedStateProtocol, 'filters', M>> {
    return this.primary.call('filters', method, args).catch((err: unknown) => {
      throw new GatewayError('FILTERS_UNAVAILABLE', {}, { cause: err });
    });
  }

  add(filter: FilterState, max: number): Promise<boolean> {
    return this.ask('add', [filter, max]);
  }

  /** A filter the primary does not have comes as no value (JSON has no undefined). */
  get(id: string): Promise<FilterState | undefined> {
    return this.ask('get', [id]).then((f) => f ?? undefined);
  }

  update(filter: FilterState): Promise<boolean> {
    return this.ask('update', [filter]);
  }

  remove(id: string): Promise<boolean> {
    return this.ask('remove', [id]);
  }

  noteSent(network: string, hash: string): Promise<void> {
    return this.ask('noteSent', [network, hash]);
  }

  sentSince(network: string, after?: number): Promise<{ seq: number; hashes: string[] }> {
    return this.ask('sentSince', [network, after]);
  }

  /** Every worker's filters, as last counted (at most a second old: /metrics reads it synchronously). */
  get size(): number {
    const now = Date.now();
    if (now - this.sizeAsked > 1000) {
      this.sizeAsked = now;
      this.primary.call('filters', 'size', []).then((n) => { this.lastSize = n; }, () => {});
    }
    return this.lastSize;
  }

  async close(): Promise<void> {}
}

/**
 * Each network's head, shared by the workers through the primary, embedded chains included (they are the primary's,
 * and every worker shows them). Reads of one turn of the event loop go in one call.
 */
export class RemoteHeads implements HeadsHub {
  readonly embeddedToo = true;
  private readonly followers = new Map<string, (n: number) => void>();
  /** The reads of one turn of the event loop, in one call. */
  private readonly reads = new TurnReads((keys) => this.primary.call('heads', 'read', [keys]));

  constructor(private readonly primary: ToPrimary) {
    primary.on('head', ({ key, n, mode }) => {
      if (mode === 'up') this.followers.get(key)?.(n);
    });
  }

  network(chainId: number, upstreams: readonly string[], follow: (n: number) => void): SharedHead {
    const key = headKey(chainId, upstreams);
    this.followers.set(key, follow);
    const quiet = () => {};
    return {
      publish: (n) => this.primary.call('heads', 'publish', [key, n]).then(quiet, quiet),
      lower: (n) => this.primary.call('heads', 'lower', [key, n]).then(quiet, quiet),
      read: () => this.reads.read(key),
      leads: (ttlMs) => this.primary.call('heads', 'leads', [key, ttlMs]).catch(() => true),
      report: (report, ttlMs) => this.primary.call('heads', 'report', [key, report, ttlMs]).then(quiet, quiet),
      lastReport: () => this.primary.call('heads', 'lastReport', [key]).then((r) => r ?? undefined, () => undefined),
    };
  }

  async close(): Promise<void> {}
}

/** The login back-off in the primary (used as SharedLoginBackoff uses Redis: this worker's memory is the fallback). */
export class RemoteLoginBackoff implements LoginBackoffStore {
  readonly where = 'the primary process';

  constructor(private readonly primary: ToPrimary) {}

  waitSeconds(email: string, address: string, now: number): Promise<number> {
    return this.primary.call('backoff', 'waitSeconds', [email, address, now]);
  }

  async failed(email: string, address: string, now: number): Promise<void> {
    await this.primary.call('backoff', 'failed', [email, address, now]);
  }

  async succeeded(email: string, address: string): Promise<void> {
    await this.primary.call('backoff', 'succeeded', [email, address]);
  }

  async ping(): Promise<void> {
    await this.primary.call('backoff', 'waitSeconds', ['', '', Date.now()]);
  }
}
