/**
 * Filters kept by the gateway (docs/decisions.md §8), as plain data so that a shared store (Redis, for several instances)
 * can hold them as they are. The store only keeps them; what a poll returns is worked out in filters.ts.
 */
export type FilterKind = 'logs' | 'blocks' | 'pending';

/** A block the filter has reported on: its hash tells, at the next poll, whether a reorganisation dropped it. */
export interface SeenBlock {
  number: number;
  hash: string;
  /** Logs filters: the logs reported from this block, sent again with `removed: true` if the block is dropped. */
  logs?: unknown[];
}

export interface FilterState {
  /** A 128-bit random QUANTITY: unguessable, so another key's filter cannot be found by trying. */
  id: string;
  keyId: string;
  /** The key's account: the plan's filters are counted per account too (its keys together). */
  accountId: string;
  network: string;
  kind: FilterKind;
  /** Logs filters: the `eth_newFilter` object (address, topics, fromBlock, toBlock, blockHash). */
  criteria?: Record<string, unknown>;
  /** The newest block reported (or the head when the filter was made). */
  cursor: SeenBlock;
  /** The head when the filter was made: nothing at or before it is ever reported as new. */
  origin: number;
  /**
   * Recent blocks the filter saw, oldest first, within the reorganisation window: every block a block filter
   * reported, and for a logs filter the blocks it reported logs from and the head at each poll.
   */
  recent: SeenBlock[];
  /** Logs filters: approximate bytes of the logs kept in `recent` (bounded by filters.maxKeptBytes). */
  keptBytes?: number;
  /** Logs filters: the newest block whose kept logs were dropped for the budget (a reorganisation reaching it overflows). */
  forgotUpTo?: number;
  /** Pending filters: the sequence number of the last transaction reported, and hashes already reported. */
  pendingSeq?: number;
  pendingSeen?: string[];
  /** When it expires unless polled again, ms since the epoch. */
  expiresAt: number;
  /**
   * Set by the store on `get`, moved on by each `update`: a poll whose filter another instance polled meanwhile
   * is not saved (`update` answers false), so that two polls of one filter never report the same change twice.
   */
  version?: number;
}

/** Transactions sent through the gateway a store keeps per network, for pending filters (at least the newest this many). */
export const MAX_SENT_TRANSACTIONS = 10_000;

/**
 * Where filters live: memory on one process (memory-filter-store.ts); Redis behind several instances
 * (redis-filter-store.ts), so that a filter made on one instance polls on any other and survives a restart; the
 * primary for the workers of `--workers N` (remote-filter-store.ts). Each keeps the contract of
 * filter-store.contract.ts. While a shared store fails, filter calls answer FILTERS_UNAVAILABLE
 * (unavailable-filter-store.ts, through the shared state's fallback).
 */
export interface FilterStore {
  /** Adds `filter` unless its key, or its account, already has `max` live filters; false if so. */
  add(filter: FilterState, max: number): Promise<boolean>;
  /** The live filter with this id, or undefined (unknown or expired). */
  get(id: string): Promise<FilterState | undefined>;
  /**
   * Saves a polled filter (its cursor and expiry moved) read with `get`; true if saved. False when it was removed
   * meanwhile (it stays removed) or saved by another poll since it was read (its `version` moved on).
   */
  update(filter: FilterState): Promise<boolean>;
  /** Removes it; false if there was no live filter with this id. */
  remove(id: string): Promise<boolean>;
  /**
   * A transaction went to the node of `network` through the gateway (any instance sharing the store): it takes the
   * next number of that network's sequence, which pending filters follow.
   */
  noteSent(network: string, hash: string): Promise<void>;
  /**
   * The sequence number of the newest transaction noted on `network` (0: none), and, when `after` is given, the
   * hashes noted after number `after` (the newest MAX_SENT_TRANSACTIONS at most). A sequence lower than `after` was
   * started again (its store lost it): everything it holds is new.
   */
  sentSince(network: string, after?: number): Promise<{ seq: number; hashes: string[] }>;
  /** Live filters (memory: this instance's; Redis: every instance's, as last counted), for /metrics. */
  readonly size: number;
  close(): Promise<void>;
}
