import type { ArgsOf, ResultOf } from '../ipc.ts';
import type { SharedStateClient, SharedStateProtocol } from '../protocol.ts';
import type { FilterState, FilterStore } from './filter-store.ts';

type Calls = SharedStateProtocol['filters'];

/**
 * The filters of a worker of `--workers N`, kept by its primary (in its memory store): a filter made through one
 * worker polls through any other. A primary that does not answer in time fails the call (the shared state's fallback
 * then answers FILTERS_UNAVAILABLE).
 */
export class RemoteFilterStore implements FilterStore {
  private lastSize = 0;
  private sizeAsked = 0;

  constructor(private readonly primary: SharedStateClient) {}

  private ask<M extends keyof Calls & string>(method: M, args: ArgsOf<SharedStateProtocol, 'filters', M>): Promise<ResultOf<SharedStateProtocol, 'filters', M>> {
    return this.primary.call('filters', method, args);
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
