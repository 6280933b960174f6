import type { SharedStateClient } from '../protocol.ts';
import type { Leases } from './leases.ts';

/** The leases of a worker of `--workers N`, in its primary's table (the primary knows the worker by its channel). */
export class RemoteLeases implements Leases {
  constructor(private readonly primary: SharedStateClient) {}

  take(name: string, ttlMs: number): Promise<boolean> {
    return this.primary.call('leases', 'take', [name, ttlMs]);
  }

  async close(): Promise<void> {}
}
