import { createHash } from 'node:crypto';

/**
 * One head for every process in front of the same nodes (instances through Redis, workers through their primary):
 * behind a load balancer, processes that each keep their own head and their own cache of head-tied answers (about
 * 500 ms apart) answer one client a nonce older than the receipt another process has just shown it, and an
 * `eth_blockNumber` below that receipt's block.
 *
 * Two rules make that impossible, whatever the timing:
 * - **Announced before shown.** A block this process takes as existing (an answer showed it, a check read it) is
 *   published (kept as the highest) before any answer that shows it, or is tied to it, leaves this process
 *   (`ChainHead.announced`, awaited by the pipeline's `head` stage).
 * - **Read before answering.** A call whose answer depends on the head reads the shared head first (the `cluster`
 *   stage), with a read sent after the call arrived; a higher head moves this process's head (and so its cache
 *   epoch and the block `latest` is pinned to) before the call goes on. Reads of the calls that arrive together
 *   share one request (one per turn of the event loop, whatever the number of calls and networks: turn-reads.ts).
 * Each new head is also told to the other processes, so that they follow it within milliseconds even without calls
 * (subscriptions, filters). While the shared store fails or is slow, every process answers from its own head, as
 * one process would (the consistency across processes is what is lost, not the service): own-head.ts, through the
 * shared state's fallback, which says so once in the log.
 */
export interface SharedHead {
  /** Block `n` exists: kept as the shared head if higher. Resolves when the shared store has it. */
  publish(n: number): Promise<void>;
  /** The chain went back to `n` (this process saw it twice): the shared head follows it down. */
  lower(n: number): Promise<void>;
  /** The shared head, read with a request sent after this call; undefined when there is none. */
  read(): Promise<number | undefined>;
  /**
   * Whether this process checks the nodes this round: it holds, or just took, the network's lease (leases/) for
   * `ttlMs`; the others take its report.
   */
  leads(ttlMs: number): Promise<boolean>;
  /** The checking process's report of the nodes, kept for `ttlMs`. */
  report(report: NodesReport, ttlMs: number): Promise<void>;
  /** The last report of the checking process; undefined when none is fresh. */
  lastReport(): Promise<NodesReport | undefined>;
}

/** What one round of checks found, as the checking process publishes it for the others. */
export interface NodesReport {
  /** The network's head the round agreed on (undefined: none yet). */
  agreed: number | undefined;
  safe: number | undefined;
  finalized: number | undefined;
  /** By upstream (its label: the URL without credentials). */
  members: Record<string, { head?: number; chainId?: number; refused: boolean; forked: boolean }>;
}

/**
 * Where a process finds each network's shared head: Redis for instances (redis-heads.ts), the primary for the
 * workers of one machine (remote-heads.ts, answered from the primary's memory-heads.ts); one process alone has
 * none (its head is its own). heads-hub.contract.ts runs against each. `embeddedToo`: embedded chains are shared
 * as well (the workers' chains are the primary's; an instance's embedded anvil is its own).
 */
export interface HeadsHub {
  network(chainId: number, upstreams: readonly string[], follow: (n: number) => void): SharedHead;
  readonly embeddedToo: boolean;
  close(): Promise<void>;
}

/**
 * The name of a network's shared head: what it is (its chain id and its nodes), so that processes in front of the
 * same nodes share it and nothing else does (another deployment, a test's other chain, an instance's own anvil).
 */
export function headKey(chainId: number, upstreams: readonly string[]): string {
  return createHash('sha256').update(`${chainId}\n${[...upstreams].sort().join('\n')}`).digest('hex').slice(0, 24);
}

/** The lease of a network's node checks (leases/), by its head key. */
export const checksLease = (key: string): string => `checks:${key}`;
