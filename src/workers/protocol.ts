import type { BootstrapSecrets } from '../accounts/bootstrap.ts';
import type { Config } from '../config/schema.ts';
import type { PrimaryClient } from '../shared-state/ipc.ts';
import type { SharedStateEvents, SharedStateProtocol } from '../shared-state/protocol.ts';

/**
 * Everything a worker may ask the primary (`nodegate start --workers N`): the shared state (shared-state/protocol.ts)
 * and the worker's start and stop. The one definition both sides are typed from: `PrimaryClient<PrimaryProtocol>`
 * in the worker, `PrimaryServer<PrimaryProtocol>` in the primary (protocol.type-test.ts beside this file).
 */
export interface PrimaryProtocol extends SharedStateProtocol {
  primary: LifecycleCalls;
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
export interface PrimaryEvents extends SharedStateEvents {
  /** The embedded chain of this network restarted from its journal. */
  reset: string;
  /** Every worker listens: the first prints the banner, with the first start's secrets. */
  banner: BootstrapSecrets;
  /** Stop, for this signal. */
  shutdown: string;
}

/** A worker's client of its primary. */
export type ToPrimary = PrimaryClient<PrimaryProtocol, PrimaryEvents>;
