import type { Leases } from '../leases/leases.ts';
import type { SharedStateClient } from '../protocol.ts';
import { checksLease, headKey, type HeadsHub, type SharedHead } from './heads-hub.ts';
import { TurnReads } from './turn-reads.ts';

/**
 * Each network's head, shared by the workers of `--workers N` through their primary (memory-heads.ts there),
 * embedded chains included (they are the primary's, and every worker shows them). The primary pushes every move of a
 * head to the other workers as it happens, so a read asks nothing: a network's first read fetches its head (reads of
 * one turn of the event loop in one call), and every later one answers the head pushed last, once the turn that
 * read it is over. That keeps "read before answering" (heads-hub.ts): the primary sends the push before it answers
 * the worker that published, so the push is in this worker's channel before that worker shows the block, and so
 * before any client's call that saw the block can reach this worker; the end of the turn is when everything the
 * channel holds has been taken in. A primary that does not answer in time fails the call (the shared state's
 * fallback then answers from this worker's own head).
 */
export class RemoteHeads implements HeadsHub {
  readonly embeddedToo = true;
  private readonly followers = new Map<string, (n: number) => void>();
  /** The last head the primary told of, by key; -1 when it has none. */
  private readonly known = new Map<string, number>();
  /** The first reads, of one turn of the event loop, in one call. */
  private readonly reads = new TurnReads((keys) => this.primary.call('heads', 'read', [keys]));
  private turn: Promise<void> | undefined;

  /** `leases`: who checks each network's nodes (its lease, `checks:{key}`). */
  constructor(private readonly primary: SharedStateClient, private readonly leases: Leases) {
    primary.on('head', ({ key, n, mode }) => {
      this.told(key, n, mode);
      if (mode === 'up') this.followers.get(key)?.(n);
    });
  }

  network(chainId: number, upstreams: readonly string[], follow: (n: number) => void): SharedHead {
    const key = headKey(chainId, upstreams);
    this.followers.set(key, follow);
    return {
      // The primary pushes a move to the other workers only: this worker's own are known once the primary has them.
      publish: (n) => this.primary.call('heads', 'publish', [key, n]).then(() => this.told(key, n, 'up')),
      lower: (n) => this.primary.call('heads', 'lower', [key, n]).then(() => this.told(key, n, 'down')),
      read: () => this.read(key),
      leads: async (ttlMs) => this.leases.take(checksLease(key), ttlMs),
      report: (report, ttlMs) => this.primary.call('heads', 'report', [key, report, ttlMs]),
      lastReport: () => this.primary.call('heads', 'lastReport', [key]).then((r) => r ?? undefined),
    };
  }

  async close(): Promise<void> {}

  private read(key: string): Promise<number | undefined> {
    if (this.known.has(key)) return this.endOfTurn().then(() => this.head(key));
    return this.reads.read(key).then((n) => {
      // A push that came meanwhile is as new as the answer, or newer (the channel keeps the primary's order).
      if (!this.known.has(key)) this.known.set(key, n ?? -1);
      return this.head(key);
    });
  }

  /** The primary's head of `key` moved: up to `n` (if higher), or down to it. */
  private told(key: string, n: number, mode: 'up' | 'down'): void {
    if (mode === 'down' || n > (this.known.get(key) ?? -1)) this.known.set(key, n);
  }

  private head(key: string): number | undefined {
    const n = this.known.get(key) ?? -1;
    return n < 0 ? undefined : n;
  }

  /** Settles once this turn of the event loop is over: one timer for every read of the turn. */
  private endOfTurn(): Promise<void> {
    return (this.turn ??= new Promise<void>((resolve) => setImmediate(() => {
      this.turn = undefined;
      resolve();
    })));
  }
}
