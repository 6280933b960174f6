/**
 * What the parts of a network's pool (member choice, hedging, retries, holdings, room, broadcast) read and write of
 * the pool itself (upstream-pool.ts): its members and policy, the heads it goes by, what it has learnt, and its one
 * call to a member. The parts take the pool itself as their first argument: calling one costs what calling a method
 * costs, no object or closure more per call.
 */
import type { Logger } from 'pino';
import type { CoarseClock } from '../background/coarse-clock.ts';
import type { CallSignal } from '../errors/on-abort.ts';
import type { MethodFacts } from '../methods/method-spec.ts';
import type { Outcome } from '../upstream/classify.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import type { Holding } from './holdings.ts';
import type { HealthPolicy, UpstreamMember } from './upstream-member.ts';
import type { Purpose } from './upstream-spend.ts';
import type { Verifier } from './verify/verifier.ts';

/** A member's call, its answer and outcome; `member` says which member answered when the read was hedged. */
export interface Attempt {
  answer: UpstreamAnswer;
  outcome: Outcome;
  member?: UpstreamMember;
}

/** Reads waiting for room at members at their own bounds: the promise a call ending settles (room-wait.ts). */
export interface RoomWait {
  promise: Promise<void>;
  wake: () => void;
}

/** The pool, as its parts see it (UpstreamPool's own fields and its call to one member). */
export interface PoolState {
  readonly members: readonly UpstreamMember[];
  readonly policy: HealthPolicy;
  /** The best head among usable upstreams (the chain module's). */
  readonly best: () => number | undefined;
  readonly log: Logger;
  /** The clock breakers and rests are read by. */
  readonly now: () => number;
  /** What says when a read is due a hedge. */
  readonly clock: Pick<CoarseClock, 'add' | 'remove'>;
  lagFrom: (() => number | undefined) | undefined;
  seenHead: (() => number | undefined) | undefined;
  confirm: ((m: UpstreamMember) => Promise<void>) | undefined;
  jumpBlocks: number | undefined;
  onCall: ((upstream: string, seconds: number, answered: boolean) => void) | undefined;
  onVerifyFailure: ((upstream: string, check: string) => void) | undefined;
  verifier: Verifier | undefined;
  network: string;
  headerReads: number;
  /** Upstreams that hold the same accounts, in the order designated calls try them (`signer`). */
  readonly signers: readonly UpstreamMember[];
  readonly bounded: boolean;
  lacking: boolean;
  guarded: boolean;
  windowed: boolean;
  logsBounded: boolean;
  /** Block numbers by hash, as answers showed them (holdings-route.ts). */
  readonly numbers: Map<string, number>;
  roomWait: RoomWait | undefined;
  head(): number | undefined;
  setHeld(m: UpstreamMember, kind: 'state' | 'history', h: Holding): void;
  attempt(m: UpstreamMember, spec: MethodFacts, params: unknown[], timeoutMs: number, signal?: CallSignal, why?: Purpose): Promise<Attempt>;
  sentVia(m: UpstreamMember, spec: MethodFacts, params: unknown[], timeoutMs: number, signal?: CallSignal, why?: Purpose): Promise<UpstreamAnswer>;
  via(m: UpstreamMember, method: string, params: unknown[], timeoutMs: number, signal?: CallSignal, why?: Purpose): Promise<UpstreamAnswer>;
}
