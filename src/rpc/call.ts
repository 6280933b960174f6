import type { CallSignal } from '../errors/on-abort.ts';
import type { ResolvedKey } from '../auth/key-resolver.ts';
import type { SubscriptionSession } from '../subscriptions/subscriptions.ts';
import type { CacheLookup, CacheOutcome } from '../cache/response-cache.ts';
import type { Network } from '../networks/networks.ts';
import type { UpstreamAnswer } from '../upstream/upstream.ts';
import type { MethodEntry } from '../networks/method-table.ts';

/**
 * One JSON-RPC call on its way through the stages (docs/pipeline.md): what they need, and what they tell each other
 * and the transport, instead of side channels. Built once the request's limit has passed; the same for every
 * transport.
 */
export interface Call {
  readonly network: Network;
  readonly key: ResolvedKey;
  readonly requestId: string;
  readonly method: string;
  readonly params: unknown[];
  /** The method's entry: its adapter, budget, cost, local handling. */
  readonly spec: MethodEntry;
  /**
   * Compute units it costs when it runs: the spec's, and more when it is asked as several node calls (a split
   * eth_getLogs: each piece past the first is charged through `charger` and added here, so usage counts it too).
   */
  cost: number;
  /** Charges further node calls to the caller's plan (the limit stage's); absent when limits are off. */
  readonly charger: Charger | undefined;
  /** Its deadline (rpc/deadline.ts): aborted at its budget's end or when its caller is gone. */
  readonly signal: CallSignal;
  /** The caller's socket, for the subscription methods (absent over HTTP). */
  readonly session?: SubscriptionSession;
  /** Its cache lookup, when the pipeline made it before any stage (a miss of `atOnce`): the cache stage's, not redone. */
  readonly looked?: CacheLookup;
  /** Set by the cache stage: whether the answer came from the cache (`X-Cache` of a single request). */
  cache?: CacheOutcome;
  /** Set by the head stage: the newest block its answer shows to exist (read-your-writes), if any. */
  seenBlock?: number;
  /** Set by the stage that refused it by the gateway's own rules before any node work: it costs an invalid item's units. */
  refusedByRules?: boolean;
  /** Set by the pool (Route.answered): the label of the upstream whose answer it got, for the request explorer. */
  node?: string;
}

/** The rest of the stages after this one. */
export type Next = (call: Call) => Promise<UpstreamAnswer>;

/** One stage, as fastify's hooks and undici's interceptors: it gets the call and the rest, and answers. */
export type Stage = (call: Call, next: Next) => Promise<UpstreamAnswer>;

/**
 * Charges `units` more to the key's account, as the limit stage charges a request (its per-second bucket and its
 * month); throws or rejects with the limit's 429 when they cannot be paid.
 */
export interface Charger {
  charge(key: ResolvedKey, units: number): unknown;
}
