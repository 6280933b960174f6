import type { LoginBackoffStore } from './login-backoff/login-backoff.ts';
import type { NodesReport } from './heads/heads-hub.ts';
import type { FilterStore } from './filter-store/filter-store.ts';
import type { Leases } from './leases/leases.ts';
import type { LeaseAnswer, LeaseAsk, ShareReturn } from './rate-limiter/leased-buckets.ts';
import type { Asks } from './ipc.ts';

/**
 * The shared state a worker of `nodegate start --workers N` asks its primary for, kind by kind: the part of the
 * workers' protocol (workers/protocol.ts adds their start and stop) that the primary's side (primary-state.ts) and
 * the workers' variants (`remote-*.ts`) are typed from. The worker's `PrimaryClient.call` takes a service, a
 * method and its arguments from here and resolves with its result; the primary's `PrimaryServer.offer` takes, for
 * a service, one handler per method with the same arguments and result. A method renamed or changed here fails the
 * type check on both sides (protocol.type-test.ts).
 *
 * The services are the kinds' interfaces, which their memory variants implement, so that the primary answers with
 * the memory variant itself; arguments and results are plain data (the channel is JSON, as Redis is strings).
 */
export interface SharedStateProtocol {
  /** The per-second buckets, owned by the primary and leased to the workers (rate-limiter/leased-buckets.ts). */
  limiter: {
    lease(ask: LeaseAsk): LeaseAnswer;
    giveBack(share: ShareReturn): void;
  };
  filters: Pick<FilterStore, 'add' | 'get' | 'update' | 'remove' | 'noteSent' | 'sentSince'> & {
    /** Every worker's filters (FilterStore's `size`, as a call). */
    size(): number;
  };
  heads: HeadsCalls;
  /** The calling worker holds the lease: the primary knows it by its channel. */
  leases: Pick<Leases, 'take'>;
  backoff: LoginBackoffStore;
  /** One round trip: whether the primary answers (fallback.ts asks it while a kind is degraded). */
  shared: { ping(): void };
}

/** A network's shared head in the primary, by its `headKey`: SharedHead's methods, for any network. */
export interface HeadsCalls {
  publish(key: string, n: number): void;
  lower(key: string, n: number): void;
  /** The heads of `keys`, in order; null where none is known. */
  read(keys: string[]): Array<number | null>;
  report(key: string, report: NodesReport, ttlMs: number): void;
  lastReport(key: string): NodesReport | null;
}

/** What the primary tells the workers of the shared state unasked, by topic. */
export interface SharedStateEvents {
  /** A worker published a head (`up`) or saw the chain go back (`down`; to -1: no head, the chain restarted). */
  head: { key: string; n: number; mode: 'up' | 'down' };
}

/** A worker's client of its primary, as the shared state's variants use it. */
export type SharedStateClient = Asks<SharedStateProtocol, SharedStateEvents>;
