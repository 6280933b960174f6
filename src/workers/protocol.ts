import type { LoginBackoffStore } from '../api/login-backoff.ts';
import type { BootstrapSecrets } from '../accounts/bootstrap.ts';
import type { NodesReport } from '../chain/cluster-head.ts';
import type { FilterStore } from '../filters/filter-store.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { Config } from '../config/schema.ts';

/**
 * Everything a worker may ask the primary (`nodegate start --workers N`), service by service: the one definition
 * both sides are typed from. The worker's `PrimaryClient.call` takes a service, a method and its arguments from
 * here and resolves with its result; the primary's `PrimaryServer.offer` takes, for a service, one handler per
 * method with the same arguments and result. A method renamed or changed here fails the type check on both sides.
 *
 * The shared kinds are the interfaces their memory and Redis variants implement, so that the primary answers with
 * the memory variant itself; arguments and results are plain data (the channel is JSON, as Redis is strings).
 */
export interface PrimaryProtocol {
  limiter: Pick<RateLimiter, 'consume'>;
  filters: Pick<FilterStore, 'add' | 'get' | 'update' | 'remove' | 'noteSent' | 'sentSince'> & {
    /** Every worker's filters (FilterStore's `size`, as a call). */
    size(): number;
  };
  heads: HeadsCalls;
  backoff: LoginBackoffStore;
  primary: LifecycleCalls;
}

/** A network's shared head in the primary, by its `headKey`: SharedHead's methods, for any network. */
export interface HeadsCalls {
  publish(key: string, n: number): void;
  lower(key: string, n: number): void;
  /** The heads of `keys`, in order; null where none is known. */
  read(keys: string[]): Array<number | null>;
  leads(key: string, ttlMs: number): boolean;
  report(key: string, report: NodesReport, ttlMs: number): void;
  lastReport(key: string): NodesReport | null;
}

/** What the primary tells a worker it starts (the `primary.start` call). */
export interface WorkerStart {
  config: Readonly<Config>;
  /** Base URL of the primary's embedded chains (chain-server.ts). */
  chains: string;
  /** The secret the chain server asks of every call (chain-secret.ts): this start's, told over IPC only. */
  chainSecret: string;
  index: number;
  workers: number;
}

/** A worker's start and stop, told to the primary. */
export interface LifecycleCalls {
  /** What this worker serves with (it asks before anything else). */
  start(): WorkerStart;
  /** This worker listens at `url`. */
  ready(url: string): void;
  /** This worker closed its listener (port-closing.ts). */
  stoppedAccepting(): void;
}

/** What the primary tells the workers unasked, by topic. */
export interface PrimaryEvents {
  /** A worker published a head (`up`) or saw the chain go back (`down`). */
  head: { key: string; n: number; mode: 'up' | 'down' };
  /** The embedded chain of this network restarted from its journal. */
  reset: string;
  /** Every worker listens: the first prints the banner, with the first start's secrets. */
  banner: BootstrapSecrets;
  /** Stop, for this signal. */
  shutdown: string;
}
